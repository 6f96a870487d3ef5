"""A tournament written out for other tools: FIDE's TRF-16 (the report pairing programs and rating
offices read) for a Swiss or a round robin at tables of two, and its games with their events as
JSON Lines. Pure: the caller hands in the document and reads the games."""

from collections.abc import Callable, Iterator
from datetime import UTC, datetime

from .document import TournamentDocument
from .rounds import played
from .standings import standings


def trf(doc: TournamentDocument, ratings: list[float]) -> str:
    """TRF-16: a 001 line per entrant (start number, name, points, rank, then each round: the
    opponent's start number, the colour (`w`: the first seat of the pairing's first game), and the
    result: 1, 0 or = by games won; a bye `0000 - F`, a round not played `0000 - U`)."""
    rows = {row["entrant"]: row for row in standings(doc["names"], played(doc), ratings)}
    started = datetime.fromtimestamp(doc["starts_at"], UTC).strftime("%Y/%m/%d")
    lines = [f"012 Ronda {doc['format'].replace('_', ' ')} {doc['id']}", f"042 {started}",
             f"062 {len(doc['entrants'])}", f"092 {'Round robin' if doc['format'] == 'round_robin' else 'Swiss'}",
             "XXC white1"]
    for entrant, name in enumerate(doc["names"]):
        row = rows[entrant]
        line = (f"001 {entrant + 1:>4}      {name[:33]:<33} {round(ratings[entrant]):>4}"
                f"{'':17}{'':10} {row['points']:>4.1f} {row['rank']:>4}")
        for number in doc["rounds"]:
            line += "  " + _cell(number["pairings"], entrant)
        lines.append(line.rstrip())
    return "\n".join(lines) + "\n"


def _cell(tables: list, entrant: int) -> str:
    for table in tables:
        if entrant not in table["seats"]:
            continue
        if len(table["seats"]) == 1:
            return "0000 - F"
        opponent = next(e for e in table["seats"] if e != entrant)
        colour = "w" if table["seats"][0] == entrant else "b"
        result = table["result"]
        if result is None:
            return f"{opponent + 1:>4} {colour}  "
        mine, theirs = (result["wins"][table["seats"].index(e)] for e in (entrant, opponent))
        return f"{opponent + 1:>4} {colour} {'1' if mine > theirs else '0' if mine < theirs else '='}"
    return "0000 - U"


def game_ids(doc: TournamentDocument, match_games: Callable[[str], list[str]]) -> Iterator[tuple[int, int, str]]:
    """(round, table, game id) of every game played or in play, in order."""
    for number in doc["rounds"]:
        for k, table in enumerate(number["pairings"]):
            ids = table["games"] or (match_games(table["match_id"]) if table["match_id"] else [])
            for game_id in ids:
                yield number["round"], k, game_id
