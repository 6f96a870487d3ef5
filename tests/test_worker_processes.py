"""`ronda worker` as users run it: the image's environment, busy when Redis drops, its child
supervised, nothing orphaned when it is killed. Real redis-server and worker processes."""

import os
import signal
import subprocess
import sys
import time
import uuid
from datetime import UTC, datetime, timedelta

import pytest
from rq import Queue, Worker
from rq.job import JobStatus
from rq.scheduler import SCHEDULER_KEY_TEMPLATE, RQScheduler
from rq.utils import utcparse

from app import create_app
from app.ops.connection import connect
from faults import children, start_worker, stop, worker_check, worker_env
from test_faults import NO_LIMITS, wait_for
from workers.runner import SCHEDULER_SILENT_SECONDS, running

pytestmark = pytest.mark.slow  # processes killed and restarted: left out of the fast loop (pytest -m 'not slow')

EXPERTS = {"players": 2, "rules": {"preset": "simple", "target": 21},
           "seats": [{"type": "bot", "bot": "expert"}, {"type": "bot", "bot": "expert"}]}


@pytest.fixture
def queue_name():
    return f"bots-processes-{uuid.uuid4().hex[:8]}"


def rq_client(url, queue_name):
    return create_app({"REDIS_URL": url, "BOT_QUEUE": queue_name, "BOT_DISPATCH": "rq", **NO_LIMITS}).test_client()


def finished(client, game_ids):
    return all(client.get(f"/games/{game_id}").json["status"] == "finished" for game_id in game_ids)


def test_the_worker_starts_with_the_images_metrics_directory_absent(redis_url, queue_name, tmp_path):
    """The Dockerfile names a PROMETHEUS_MULTIPROC_DIR that nothing creates: the check and the worker
    both start, and the worker plays bot moves."""
    absent = str(tmp_path / "not-made" / "metrics")
    check = worker_env(redis_url, queue_name, PROMETHEUS_MULTIPROC_DIR=absent + "-check")
    before = subprocess.run([sys.executable, "-m", "app.cli", "worker", "--check"], env=check, capture_output=True,
                            text=True, timeout=30)
    assert "Traceback" not in before.stderr, before.stderr
    worker = start_worker(redis_url, queue_name, PROMETHEUS_MULTIPROC_DIR=absent)
    try:
        client = rq_client(redis_url, queue_name)
        game_id = client.post("/games", json={**EXPERTS, "rules": {"preset": "simple", "target": 5}}).json["game"]["id"]
        wait_for(lambda: finished(client, [game_id]), 60)
        assert worker.poll() is None and os.listdir(absent)  # its metrics are written there
        assert worker_check(redis_url, queue_name) == 0
    finally:
        stop(worker)


def test_busy_workers_outlive_redis_dropping_for_two_seconds(own_redis, queue_name):
    """Two workers in the middle of bot games and a match when Redis goes away for two seconds:
    every process is still running afterwards and every game and the match finish."""
    workers = [start_worker(own_redis.url, queue_name) for _ in range(2)]
    try:
        client = rq_client(own_redis.url, queue_name)
        game_ids = [client.post("/games", json=EXPERTS).json["game"]["id"] for _ in range(6)]
        match_id = client.post("/matches", json={"bots": ["expert", "greedy"], "games": 4,
                                                 "rules": {"preset": "simple", "target": 21}}).json["id"]
        wait_for(lambda: all(client.get(f"/games/{g}").json["version"] >= 5 for g in game_ids), 60)
        registered_before = {w.name for w in Worker.all(connection=connect(own_redis.url))}
        own_redis.kill()
        time.sleep(2)
        own_redis.launch_again()
        # Each RQ worker registers again at once, not after its stale registration (kept in the
        # append-only file) expires: RQ refuses a name still registered.
        wait_for(lambda: len({w.name for w in Worker.all(connection=connect(own_redis.url))}
                             - registered_before) >= 1, 30)
        wait_for(lambda: finished(client, game_ids), 180)
        wait_for(lambda: client.get(f"/matches/{match_id}").json["status"] == "finished", 180)
        assert all(worker.poll() is None for worker in workers), "a worker quit when Redis dropped"
        wait_for(lambda: worker_check(own_redis.url, queue_name) == 0, 60)
    finally:
        for worker in workers:
            stop(worker)


def registered_pid(url, group: int, role: str) -> int:
    names = [w.name for w in Worker.all(connection=connect(url)) if f".{group}.{role}." in w.name]
    pids = [int(name.rsplit(".", 2)[1]) for name in names]
    return next(pid for pid in pids if running(pid))


def descendants(pid: int) -> list[int]:
    found = children(pid)
    return found + [grandchild for child in found for grandchild in descendants(child)]


def test_a_killed_match_worker_is_restarted_and_the_check_says_so_meanwhile(redis_url, queue_name):
    """The match worker child is SIGKILLed while its parent is stopped: the health check fails;
    once the parent runs again it starts another child and a match is played. Then the whole
    worker is SIGKILLed: none of its processes (the child, RQ's scheduler) is left running."""
    worker = start_worker(redis_url, queue_name)
    try:
        wait_for(lambda: worker_check(redis_url, queue_name) == 0, 60)
        child = registered_pid(redis_url, worker.pid, "matches")
        worker.send_signal(signal.SIGSTOP)
        os.kill(child, signal.SIGKILL)
        wait_for(lambda: not running(child), 10)
        assert worker_check(redis_url, queue_name) == 1
        worker.send_signal(signal.SIGCONT)
        wait_for(lambda: worker_check(redis_url, queue_name) == 0, 30)
        assert registered_pid(redis_url, worker.pid, "matches") != child
        client = rq_client(redis_url, queue_name)
        match_id = client.post("/matches", json={"bots": ["greedy", "random"], "games": 4,
                                                 "rules": {"preset": "simple", "target": 11}}).json["id"]
        wait_for(lambda: client.get(f"/matches/{match_id}").json["status"] == "finished", 120)

        family = descendants(worker.pid)
        assert family, "the worker has its child and scheduler"
        worker.kill()
        worker.wait()
        wait_for(lambda: not any(map(running, family)), 30)
    finally:
        worker.send_signal(signal.SIGCONT)
        if worker.poll() is None:
            stop(worker)


MIN_OVERLOADED_MOVES = 120


def test_a_queue_longer_than_the_stall_time_computes_no_move_twice(redis_url, queue_name, tmp_path):
    """Overload: the master's moves (100 ms each) queued longer than RONDA_BOT_STALL_SECONDS (0.1 s
    here), so every sweep finds games overdue while their jobs wait in the queue or run. The
    sweeper queues a job again only when it is really gone: over at least MIN_OVERLOADED_MOVES
    moves, bot jobs run at most 1.05 times the moves they make (queueing again the jobs that ran
    made it 1.1 and more). Jobs are counted by the worker's own metrics, kept in its multiprocess
    directory whatever the time taken (RQ's results expire after a minute)."""
    from prometheus_client import CollectorRegistry
    from prometheus_client.multiprocess import MultiProcessCollector
    client = rq_client(redis_url, queue_name)
    metrics_dir = tmp_path / "worker-metrics"
    worker = start_worker(redis_url, queue_name, stall_seconds=0.1, PROMETHEUS_MULTIPROC_DIR=str(metrics_dir))
    masters = {**EXPERTS, "rules": {"preset": "simple", "target": 81},
               "seats": [{"type": "bot", "bot": "master"}, {"type": "bot", "bot": "master"}]}

    def moves() -> int:
        return sum(client.get(f"/games/{game_id}").json["version"] - 1 for game_id in games)

    try:
        games = [client.post("/games", json=masters).json["game"]["id"] for _ in range(12)]
        wait_for(lambda: moves() >= MIN_OVERLOADED_MOVES, 600, f"{MIN_OVERLOADED_MOVES} moves made")
    finally:
        stop(worker)
    made = moves()
    registry = CollectorRegistry()
    MultiProcessCollector(registry, path=str(metrics_dir))
    runs = registry.get_sample_value("ronda_job_duration_seconds_count", {"job": "bot_turn"}) or 0
    print(f"{runs:.0f} bot jobs run for {made} moves: {runs / made:.3f} a move")
    assert made >= MIN_OVERLOADED_MOVES and runs >= made and runs / made <= 1.05


# A process as `ronda worker` is: its forks tied to it; its child ignores SIGTERM and runs on, as
# RQ's warm shutdown may; the test reads the child's pid, then SIGKILLs the parent.
STUBBORN_FAMILY = """
import multiprocessing, os, signal, sys, time
from app.ops.lifelines import tie_forks_to_their_parent
tie_forks_to_their_parent()

def child():
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    print(os.getpid(), flush=True)
    while True:
        time.sleep(0.1)

multiprocessing.get_context("fork").Process(target=child).start()
time.sleep(600)
"""


def test_a_child_whose_parent_was_sigkilled_exits_even_if_it_ignores_sigterm():
    parent = subprocess.Popen([sys.executable, "-c", STUBBORN_FAMILY], stdout=subprocess.PIPE, text=True,
                              cwd=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    child = int(parent.stdout.readline())
    assert running(child)
    parent.kill()
    parent.wait()
    wait_for(lambda: not running(child), 10)


def test_a_child_forked_by_a_parent_that_died_before_the_death_signal_was_set_exits_at_once():
    """The fork/prctl race: by the time the child sets its parent-death signal, its parent may be
    gone (the child then has another parent, init or a subreaper): it exits instead of running on."""
    from app.ops.lifelines import die_with
    pid = os.fork()
    if pid == 0:
        try:
            die_with(parent_pid=os.getppid() + 1_000_000)  # a parent that is not this one's any more
        finally:
            os._exit(0)  # reached only if die_with let it live
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 1
    pid = os.fork()
    if pid == 0:
        die_with(parent_pid=os.getppid())
        os._exit(0)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0


def scheduler_of(url, queue_name) -> tuple[str | None, float | None]:
    """Who holds the live queue's scheduler lock, and how long ago it last beat (s)."""
    store = connect(url)
    holder = store.get(RQScheduler.get_locking_key(queue_name))
    if holder is None:
        return None, None
    beat = store.hget(SCHEDULER_KEY_TEMPLATE % holder.decode(), "last_heartbeat")
    return holder.decode(), (datetime.now(UTC) - utcparse(beat.decode())).total_seconds() if beat else None


def test_a_restarted_worker_runs_scheduled_jobs_before_the_dead_schedulers_lock_runs_out(redis_url, queue_name):
    """Issue 61, 3: both workers SIGKILLed left RQ's scheduler lock to a dead scheduler for its
    61 s, and RQ tried again only at its 10-minute maintenance: every scheduled job ran late for
    minutes. A restarted worker takes a silent scheduler's lock at once, and what RQ schedules (a
    failed job's retries, 1 s and 5 s later) runs again. Turn timers no longer wait on it (issue
    65, 4: the workers' sweep queues them from the game's note)."""
    workers = [start_worker(redis_url, queue_name) for _ in range(2)]
    try:
        dead, _ = wait_for(lambda: (found := scheduler_of(redis_url, queue_name))[0] and found, 60)
        for worker in workers:
            worker.kill()
            worker.wait()
        # The dead scheduler's lock made to outlive the test: only a takeover frees it, not its expiry.
        connect(redis_url).expire(RQScheduler.get_locking_key(queue_name), 3600)
        workers = [start_worker(redis_url, queue_name)]
        # A new holder's lock is taken a moment before its first heartbeat is written: wait for both.
        _, silent = wait_for(lambda: (found := scheduler_of(redis_url, queue_name))[0] not in (None, dead)
                                  and found[1] is not None and found, 120)
        assert silent < SCHEDULER_SILENT_SECONDS  # a live scheduler holds it
        scheduled = Queue(queue_name, connection=connect(redis_url)).enqueue_in(timedelta(seconds=1), "os.getpid")
        wait_for(lambda: scheduled.get_status(refresh=True) == JobStatus.FINISHED, 120)
        assert scheduled.return_value() not in (None, os.getpid())  # run by the worker, not here
    finally:
        for worker in workers:
            if worker.poll() is None:
                stop(worker)


def test_a_worker_killed_mid_analysis_leaves_it_finished_by_the_next_and_live_bots_answer_meanwhile(
        redis_url, queue_name):
    """Issue 66, 2: analyses queue on the match process (after match games), never on the live
    one: a person's game against a bot gets every reply while analyses wait. A worker SIGKILLed
    in the middle of an analysis leaves it `running` with a lease; the next worker goes on from
    the decision it had reached, and every decision is there once, in order."""
    settings = {"RONDA_ANALYSIS_BUDGET_MS": "100", "RONDA_ANALYSIS_LEASE_SECONDS": "3"}  # parts of seconds each
    worker = start_worker(redis_url, queue_name, **settings)
    client = rq_client(redis_url, queue_name)
    try:
        bots = {"players": 2, "rules": {"preset": "simple", "target": 41},
                "seats": [{"type": "bot", "bot": "greedy"}, {"type": "bot", "bot": "random"}]}
        game_ids = [client.post("/games", json=bots).json["game"]["id"] for _ in range(4)]
        wait_for(lambda: finished(client, game_ids), 120)
        for game_id in game_ids:
            assert client.post(f"/games/{game_id}/analysis").status_code == 202

        def analyses():
            return [client.get(f"/games/{game_id}/analysis").json for game_id in game_ids]
        person = client.post("/games", json={"players": 2, "rules": {"preset": "simple"}, "seats": [
            {"type": "human", "name": "Amina"}, {"type": "bot", "bot": "greedy"}]}).json
        game_id, token = person["game"]["id"], person["tokens"][0]["token"]
        for _ in range(3):  # each move answered by the bot while the analyses wait their turn
            view = wait_for(lambda: (v := client.get(f"/games/{game_id}/view", headers={
                "Authorization": f"Bearer {token}"}).json)["awaiting"] == [0] and v, 60)
            client.post(f"/games/{game_id}/actions", json=view["legal_actions"][0],
                        headers={"Authorization": f"Bearer {token}", "If-Match": f'"{view["version"]}"'})
        wait_for(lambda: client.get(f"/games/{game_id}").json["awaiting"] == [0], 60)
        assert any(a["status"] != "done" for a in analyses())  # the bot answered with analyses still to do
        # Caught while a part is being weighed (its decisions not yet written): on a quiet box an
        # analysis may be a single part, so none is ever seen between parts.
        cut = wait_for(lambda: next((a for a in analyses() if a["status"] == "running"
                                     and a["progress"]["decisions_done"] < a["progress"]["decisions_total"]),
                                    None), 120)
        worker.kill()
        worker.wait()
        assert client.get(f"/games/{cut['game_id']}/analysis").json["status"] == "running"
        worker = start_worker(redis_url, queue_name, **settings)
        done = wait_for(lambda: all(a["status"] == "done" for a in analyses()) and analyses(), 240)
        for analysis in done:
            assert [d["index"] for d in analysis["decisions"]] == list(range(analysis["progress"]["decisions_total"]))
    finally:
        if worker.poll() is None:
            stop(worker)
