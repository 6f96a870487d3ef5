"""Train the master's evaluation (level 6) by self-play, resumably, on one machine.

Each generation:
1. plays `--games` self-play games with the current player (generation 1: the expert and its
   hand-written leaf values; then the master with the previous generation's weights), over
   every preset and player count (classic weighted up), and records the public features of
   sampled positions for every camp, labelled by whether that camp won the game;
2. fits a logistic model per table (player count and camps; Newton's method, L2) on this generation's data
   and the one before (a window, so early play does not anchor the model);
3. evaluates the new weights on duplicate 2-player `classic` games against the previous
   generation and against greedy (fixed samples a move, so the result does not depend on the
   machine's speed).

Everything lands in `--work` as it is made (data in chunks of games, each generation's model
and evaluation), so a run that is stopped starts again where it was. The last generation's
weights are written to `--output` with their provenance (command, seed, games, generations,
date, evaluations). Pure Python: nothing beyond the service's own install.

Run: .venv/bin/python bench/train.py [--generations 4] [--games 3000] [--jobs 2]
     .venv/bin/python bench/train.py --short   (a few minutes, tiny settings: what the test runs)
"""

import argparse
import json
import math
import random
import sys
import time
from datetime import datetime, UTC
from functools import partial
from multiprocessing import Pool
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from app.bots.expert import expert_bot, master_bot
from app.bots.value import FEATURES, SHIPPED_WEIGHTS, ValueModel, features, probability, table_of
from app.engine import PRESETS
from app.matches.play import entrant_results, play_game, wilson_interval

# Where self-play games are played: every preset and player count, the ones most played twice.
SETUPS = [(name, players) for name, rules in PRESETS.items() for players in rules.player_counts()]
SETUPS += [("classic", 2), ("classic", 4)]
RIDGE = 1e-3  # L2 on the weights: the features are few and the data plenty, it only steadies Newton
NEWTON_STEPS = 8


def player(model_data, iterations):
    """The generation's self-play policy: the expert before any model, the master after."""
    if model_data is None:
        return partial(expert_bot, iterations=iterations)
    return partial(master_bot, iterations=iterations, model=ValueModel.from_dict(model_data))


def self_play_chunk(task):
    """A chunk of self-play games; rows are [table, won, *features] for sampled positions."""
    seed, generation, chunk, size, model_data, iterations, sample_rate = task
    policy = player(model_data, iterations)
    pick = random.Random(f"{seed}:pick:{generation}:{chunk}")
    rows = []
    for index in range(chunk * size, (chunk + 1) * size):
        preset, players = SETUPS[index % len(SETUPS)]
        seen = []

        def observe(game, seen=seen):
            if pick.random() < sample_rate:
                seen.extend((camp, features(game, camp, game.round_index)) for camp in range(game.camps))

        played = play_game(PRESETS[preset], ["self"] * players, f"{seed}:gen{generation}", index,
                           keep_events=False, policies={"self": policy}, observe=observe)
        table = table_of(played.game)
        rows += [[table, 1.0 if played.game.winner == camp else 0.0, *row] for camp, row in seen]
    return rows


def fit(rows, table) -> list[float]:
    """Logistic regression by Newton's method with a small ridge, in plain Python."""
    data = [(row[1], row[2:]) for row in rows if row[0] == table]
    size = len(FEATURES)
    weights = [0.0] * size
    for _ in range(NEWTON_STEPS):
        gradient = [RIDGE * w for w in weights]
        hessian = [[RIDGE if i == j else 0.0 for j in range(size)] for i in range(size)]
        for label, x in data:
            p = probability(weights, x)
            error, curvature = p - label, p * (1 - p)
            for i, xi in enumerate(x):
                gradient[i] += error * xi
                if xi:
                    scaled, row = curvature * xi, hessian[i]
                    for j in range(i, size):
                        row[j] += scaled * x[j]
        for i in range(size):
            for j in range(i):
                hessian[i][j] = hessian[j][i]
        step = _solve(hessian, gradient)
        weights = [w - s for w, s in zip(weights, step, strict=False)]
        if max(map(abs, step)) < 1e-6:
            break
    return weights


def _solve(matrix, vector):
    """Gaussian elimination with partial pivoting (a dozen unknowns)."""
    n = len(vector)
    rows = [[*matrix[i][:], vector[i]] for i in range(n)]
    for col in range(n):
        pivot = max(range(col, n), key=lambda r: abs(rows[r][col]))
        rows[col], rows[pivot] = rows[pivot], rows[col]
        for r in range(col + 1, n):
            factor = rows[r][col] / rows[col][col]
            if factor:
                rows[r] = [a - factor * b for a, b in zip(rows[r], rows[col], strict=False)]
    solution = [0.0] * n
    for r in range(n - 1, -1, -1):
        solution[r] = (rows[r][n] - sum(rows[r][c] * solution[c] for c in range(r + 1, n))) / rows[r][r]
    return solution


def log_loss(rows, model: ValueModel) -> float:
    total = 0.0
    for table, label, *x in rows:
        p = probability(model.weights[table], x)
        total -= math.log(p if label else 1 - p)
    return total / max(len(rows), 1)


def duel_game(task):
    """One duplicate 2-player classic game: candidate (entrant 0) against an opponent."""
    seed, index, candidate, opponent, iterations = task
    policies = {"candidate": player(candidate, iterations)}
    if opponent != "greedy":
        policies["opponent"] = player(opponent, iterations)
    bots = ["candidate", "greedy" if opponent == "greedy" else "opponent"]
    played = play_game(PRESETS["classic"], bots, seed, index, keep_events=False, policies=policies)
    return entrant_results(played)[0]["wins"]


class Run:
    """The work directory: what is done is on disk, so each step is skipped once made."""

    def __init__(self, args, command):
        self.args, self.command, self.work = args, command, Path(args.work)
        self.work.mkdir(parents=True, exist_ok=True)
        settings = {k: v for k, v in vars(args).items() if k not in ("jobs", "output", "work")}
        stored = self.work / "settings.json"
        if stored.exists() and json.loads(stored.read_text()) != settings:
            sys.exit(f"{self.work} holds a run with other settings; choose another --work or the same settings")
        stored.write_text(json.dumps(settings, indent=1))
        self.started, self.done_units = time.time(), 0
        self.pool = Pool(args.jobs) if args.jobs > 1 else None

    def map(self, function, tasks):
        return self.pool.imap(function, tasks) if self.pool else map(function, tasks)

    def progress(self, label, done, total, units_left):
        elapsed = time.time() - self.started
        rate = self.done_units / elapsed if elapsed and self.done_units else 0
        eta = f", about {units_left / rate / 60:.0f} min left in all" if rate else ""
        print(f"  {label}: {done}/{total}{eta}", flush=True)

    def generation(self, g, previous):
        args, folder = self.args, self.work / f"gen{g}"
        folder.mkdir(exist_ok=True)
        chunks = math.ceil(args.games / args.chunk)
        missing = [c for c in range(chunks) if not (folder / f"chunk{c}.json").exists()]
        print(f"generation {g}/{args.generations}: self-play, {chunks - len(missing)}/{chunks} chunks "
              f"of {args.chunk} games on disk", flush=True)
        tasks = [(args.seed, g, c, args.chunk, previous, args.iterations, args.sample_rate) for c in missing]
        for done, (chunk, rows) in enumerate(zip(missing, self.map(self_play_chunk, tasks), strict=False), start=1):
            (folder / f"chunk{chunk}.json").write_text(json.dumps(rows))
            self.done_units += 1
            self.progress("chunks", done, len(missing), self.units_left(g, len(missing) - done))
        model_file = folder / "model.json"
        if not model_file.exists():
            rows = self.rows(g) + (self.rows(g - 1) if g > 1 else [])
            weights = {table: fit(rows, table) for table in sorted({row[0] for row in rows})}
            model = ValueModel(weights)
            model_file.write_text(json.dumps({**model.to_dict(), "rows": len(rows),
                                              "log_loss": log_loss(rows, model)}))
        model_data = json.loads(model_file.read_text())
        print(f"  fitted on {model_data['rows']:,} positions, log loss {model_data['log_loss']:.4f}", flush=True)
        eval_file = folder / "eval.json"
        if not eval_file.exists():
            results = {}
            for opponent_name, opponent in (("previous", previous), ("greedy", "greedy")):
                tasks = [
                    (f"{args.seed}:eval", i, model_data, opponent, args.iterations) for i in range(args.eval_games)
                ]
                wins = sum(self.map(duel_game, tasks))
                low, high = wilson_interval(wins, args.eval_games)
                results[opponent_name] = {"games": args.eval_games, "win_rate": wins / args.eval_games,
                                          "wilson_95": [low, high]}
                print(f"  against {opponent_name}: {wins / args.eval_games:.1%} [{low:.1%}, {high:.1%}] "
                      f"of {args.eval_games} games", flush=True)
            eval_file.write_text(json.dumps(results))
        return model_data, json.loads(eval_file.read_text())

    def rows(self, g):
        return [
            row for path in sorted((self.work / f"gen{g}").glob("chunk*.json")) for row in json.loads(path.read_text())
        ]

    def units_left(self, g, chunks_left):
        return chunks_left + (self.args.generations - g) * math.ceil(self.args.games / self.args.chunk)

    def train(self):
        previous, history = None, []
        for g in range(1, self.args.generations + 1):
            previous, evaluation = self.generation(g, previous)
            history.append({"generation": g, "positions": previous["rows"], "log_loss": previous["log_loss"],
                            **evaluation})
        if self.pool:
            self.pool.close()
        model = ValueModel.from_dict(previous)
        model.provenance = {
            "command": self.command, "seed": self.args.seed,
            "games_per_generation": self.args.games, "generations": self.args.generations,
            "samples_per_move": self.args.iterations, "date": datetime.now(UTC).isoformat(timespec="seconds"),
            "minutes": round((time.time() - self.started) / 60, 1), "history": history,
        }
        Path(self.args.output).write_text(json.dumps(model.to_dict(), indent=1) + "\n")
        print(f"weights written to {self.args.output}")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--generations", type=int, default=4)
    parser.add_argument("--games", type=int, default=3000, help="self-play games per generation")
    parser.add_argument("--iterations", type=int, default=8, help="samples a move in self-play and evaluation")
    parser.add_argument("--sample-rate", type=float, default=0.3, help="share of positions recorded")
    parser.add_argument("--eval-games", type=int, default=400, help="duplicate games per evaluation")
    parser.add_argument("--chunk", type=int, default=25, help="games per data file: what a stopped run resumes from")
    parser.add_argument("--seed", default="master-1")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--work", default="bench/train-run", help="where a run keeps what it made (resumable)")
    parser.add_argument("--output", default=str(SHIPPED_WEIGHTS))
    parser.add_argument("--short", action="store_true", help="tiny settings: a run end to end in a few minutes")
    argv = sys.argv[1:] if argv is None else argv
    args = parser.parse_args(argv)
    if args.short:
        args.generations, args.games, args.chunk, args.eval_games, args.iterations = 2, 16, 8, 8, 2
    Run(args, " ".join(["bench/train.py", *argv])).train()


if __name__ == "__main__":
    main()
