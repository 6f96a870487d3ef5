"""A studio's server with a client generated from the spec: it signs two of its own users in (its
ids for them, never a Ronda token stored on its side), hands each device its token, and the two
play a quick-play game with those tokens alone. Then the server reads one user's data, acting for
them, and deletes the other's account, as its app's "Delete my account" would.

    openapi-python-client generate --path openapi/openapi.json --meta none --output-path ronda_client
    python examples/studio_server.py http://127.0.0.1:8000 rsrv.… rapp.…

The keys are an app's (`ronda apps create`, docs/apps.md): the server key stays on the server,
the client key ships in the app.
"""

import sys

from play_against_a_bot import call
from quick_play import play_out, quick_play
from ronda_client import AuthenticatedClient, Client
from ronda_client.api.app_players import sign_in_player
from ronda_client.api.players import delete_me, export_me
from ronda_client.models import SignInRequest


def sign_in(server: Client, external_id: str, name: str, device: str) -> tuple[str, str]:
    """The studio's user `external_id` as a Ronda player: (their player id, a token for `device`)."""
    signed_in = call(sign_in_player, client=server,
                     body=SignInRequest(external_id=external_id, name=name, device=device)).parsed
    return signed_in.player.id, signed_in.token


def device(base_url: str, client_key: str, token: str) -> AuthenticatedClient:
    """What the app on a phone holds: the client key and its player's token."""
    return AuthenticatedClient(base_url=base_url, token=token, headers={"X-Ronda-App": client_key})


def acting_for(server: Client, player_id: str) -> Client:
    """The studio's server, acting for one of its players (no token of theirs needed)."""
    return server.with_headers({"Ronda-On-Behalf-Of": player_id})


def run(base_url: str, server_key: str, client_key: str) -> dict:
    server = Client(base_url=base_url, headers={"X-Ronda-App": server_key})
    (amina, amina_token), (omar, omar_token) = (sign_in(server, "user-1", "Amina", "Amina's phone"),
                                                sign_in(server, "user-2", "Omar", "Omar's tablet"))
    phones = [device(base_url, client_key, amina_token), device(base_url, client_key, omar_token)]
    game_id = quick_play(phones)
    final = play_out(game_id, phones)
    exported = call(export_me, client=acting_for(server, amina)).parsed
    call(delete_me, client=acting_for(server, omar))
    return {"game_id": game_id, "winner": final.winner, "amina_games": [g.id for g in exported.games],
            "amina_external_id": exported.profile.external_id, "omar_deleted": omar}


if __name__ == "__main__":
    print(run(*sys.argv[1:4]))
