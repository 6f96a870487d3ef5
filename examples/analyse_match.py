"""A bot match analysed: each bot's accuracy, the points it gives up a decision, and its worst decision.

    openapi-python-client generate --path openapi/openapi.json --meta none --output-path ronda_client
    python examples/analyse_match.py http://127.0.0.1:8000 [bot] [bot] [games]

It uses the generated package as it comes: a match, then every game of it analysed by the master on
the service's workers (docs/analysis.md).
"""

import sys
import time

from play_against_a_bot import call  # waits out 429s as Retry-After says
from ronda_client import Client
from ronda_client.api.matches import analyse_match, create_match, get_match, get_match_analysis
from ronda_client.models import CreateMatchRequest, MatchAnalysis, RuleOptions


def run(base_url: str, bots: tuple[str, str] = ("greedy", "random"), games: int = 2,
        preset: str = "simple") -> MatchAnalysis:
    client = Client(base_url=base_url)
    match = call(create_match, client=client, body=CreateMatchRequest(
        bots=list(bots), games=games, rules=RuleOptions(preset=preset))).parsed
    while call(get_match, match.id, client=client).parsed.status != "finished":
        time.sleep(0.5)
    review = call(analyse_match, match.id, client=client).parsed
    while review.games_analysed + review.games_failed < review.games:
        time.sleep(1)
        review = call(get_match_analysis, match.id, client=client).parsed
    return review


def report(review: MatchAnalysis) -> str:
    lines = [f"{review.games_analysed} of {review.games} games analysed"]
    for bot in review.bots:
        worst = bot.worst[0] if bot.worst else None
        lines.append(f"{bot.bot:>10}: accuracy {bot.accuracy:5.1f}, {bot.mean_loss:.2f} points given up a decision"
                     + (f"; worst: {worst.mark} in game {worst.game_id} (decision {worst.index}, "
                        f"{worst.loss:.1f} points)" if worst else ""))
    return "\n".join(lines)


if __name__ == "__main__":
    url = sys.argv[1] if len(sys.argv) > 1 else "http://127.0.0.1:8000"
    chosen = (sys.argv[2], sys.argv[3]) if len(sys.argv) > 3 else ("greedy", "random")
    print(report(run(url, chosen, int(sys.argv[4]) if len(sys.argv) > 4 else 2)))
