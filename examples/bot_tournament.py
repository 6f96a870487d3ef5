"""Two registered bots meet in a round robin; each plays its own turns over HTTP, and the
crosstable is printed at the end.

    openapi-python-client generate --path openapi/openapi.json --meta none --output-path ronda_client
    python examples/bot_tournament.py http://127.0.0.1:8000 [games per pairing]

It uses the generated package as it comes, and the turn loop of examples/outside_bot.py: each bot
long-polls its turns with its own token, in a thread of its own.
"""

import sys
import threading

from outside_bot import play_turns
from play_against_a_bot import call  # waits out 429s as Retry-After says
from ronda_client import AuthenticatedClient, Client
from ronda_client.api.bots import create_bot
from ronda_client.api.tournaments import create_tournament, get_tournament
from ronda_client.models import (CreateBotRequest, CreateTournamentRequest, CreateTournamentRequestFormat, RuleOptions,
                                 Tournament, TournamentSummaryStatus)


def run(base_url: str, games_per_pairing: int = 2, preset: str = "simple") -> Tournament:
    anonymous = Client(base_url=base_url)
    bots = [call(create_bot, client=anonymous, body=CreateBotRequest(name=name)).parsed for name in ("Ali", "Badr")]
    tournament = call(create_tournament, client=anonymous, body=CreateTournamentRequest(
        format_=CreateTournamentRequestFormat.ROUND_ROBIN, entrants=[bot.bot.entrant for bot in bots],
        games_per_pairing=games_per_pairing, rules=RuleOptions(preset=preset))).parsed
    finished = threading.Event()

    def over() -> bool:
        if call(get_tournament, tournament.id, client=anonymous).parsed.status == TournamentSummaryStatus.FINISHED:
            finished.set()
        return finished.is_set()

    players = [threading.Thread(target=play_turns, args=(AuthenticatedClient(base_url=base_url, token=bot.token), over))
               for bot in bots]
    for player in players:
        player.start()
    for player in players:
        player.join()
    return call(get_tournament, tournament.id, client=anonymous).parsed


def crosstable_text(tournament: Tournament) -> str:
    """One line per entrant: its name, then its games won of played against each entrant."""
    names = tournament.names
    lines = [" " * 12 + "".join(f"{name[:8]:>10}" for name in names) + "    points"]
    points = {row.entrant: row.points for row in tournament.standings}
    for row in tournament.crosstable:
        cells = {cell.opponent: f"{cell.wins}/{cell.games}" for cell in row.against}
        lines.append(f"{row.name[:12]:<12}" + "".join(f"{cells.get(i, '-'):>10}" for i in range(len(names)))
                     + f"{points[row.entrant]:>10g}")
    return "\n".join(lines)


if __name__ == "__main__":
    url = sys.argv[1] if len(sys.argv) > 1 else "http://127.0.0.1:8000"
    print(crosstable_text(run(url, int(sys.argv[2]) if len(sys.argv) > 2 else 2)))
