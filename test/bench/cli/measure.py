#!/usr/bin/env python3
"""Runs one command and reports what the whole process tree cost, as one JSON line on stdout.

    python3 measure.py --cwd DIR --stdout FILE --stderr FILE --timeout SECONDS -- CMD ARGS...

Node cannot read a child's rusage, so cli.mjs spawns this wrapper (Python 3.9+, standard
library only; Linux, since it reads /proc). The command inherits this process's environment,
runs in its own session (setsid) with stdin from /dev/null, and is reaped with os.wait4, which
returns the rusage of the child together with every descendant it reaped:

- wall_ms: monotonic clock from just before posix_spawn to wait4's return (this wrapper's own
  start-up is not included);
- cpu_ms: ru_utime + ru_stime of the child and its reaped descendants;
- max_rss_kb: ru_maxrss, the peak RSS of the largest single process of the tree (exact, kernel
  accounted);
- tree_rss_kb: the largest sum of RSS over the live tree (the child, its descendants, and
  anything left in its session), sampled every --interval ms. A child caught between fork and
  exec (same command line as its parent, or none yet) is left out: its RSS is its parent's pages,
  shared, and counting it would double the figure. A sample can miss a short spike, so this is a
  lower bound; the bench reports max(tree_rss_kb, max_rss_kb) as the tree's peak.

Processes still alive in the session after the child exits are killed and listed in
`leftovers`; a command that runs past --timeout has its session killed and `timed_out` set.
"""

import argparse
import json
import os
import signal
import sys
import threading
import time

PAGE_KB = os.sysconf("SC_PAGE_SIZE") // 1024


def read_stat(pid):
    """(ppid, sid, rss_kb) of one process, or None when it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            stat = handle.read().decode("utf-8", "replace")
    except OSError:
        return None
    # The command name (field 2) may contain spaces and parentheses: split after the last ')'.
    fields = stat[stat.rfind(")") + 2 :].split()
    try:
        # fields[0] is the state (field 3); ppid is field 4, session field 6, rss (pages) field 24.
        return int(fields[1]), int(fields[3]), int(fields[21]) * PAGE_KB
    except (IndexError, ValueError):
        return None


def cmdline(pid):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as handle:
            return handle.read().replace(b"\0", b" ").decode("utf-8", "replace").strip()[:160]
    except OSError:
        return str(pid)


def pids():
    return [int(name) for name in os.listdir("/proc") if name.isdigit()]


class TreeSampler:
    """Sums the RSS of a process tree. Processes that existed before the root was spawned, or
    that turned out not to belong to the tree, are never read again, so a sample costs a
    listdir of /proc plus one small read per process of the tree."""

    def __init__(self):
        self.foreign = set(pids())
        self.peak_kb = 0
        self.samples = 0
        self.peak_tree = []
        self.clones_skipped = 0

    def members(self, root):
        """pid -> (ppid, sid, rss_kb) for root's tree: descendants by parent link, plus anything
        left in root's session (root runs under setsid, so its session id is its pid)."""
        table = {}
        for pid in pids():
            if pid in self.foreign:
                continue
            info = read_stat(pid)
            if info is not None:
                table[pid] = info
        children = {}
        for pid, (ppid, _sid, _rss) in table.items():
            children.setdefault(ppid, []).append(pid)
        found = set()
        stack = [root]
        while stack:
            pid = stack.pop()
            if pid in found or pid not in table:
                continue
            found.add(pid)
            stack.extend(children.get(pid, []))
        found.update(pid for pid, (_ppid, sid, _rss) in table.items() if sid == root)
        # A process outside the tree now never joins it later (its parent is not ours).
        self.foreign.update(pid for pid in table if pid not in found)
        return {pid: table[pid] for pid in found}

    def sample(self, root):
        members = self.members(root)
        commands = {pid: cmdline(pid) for pid in members}
        counted = {}
        for pid, (ppid, _sid, rss) in members.items():
            # A child caught between fork/vfork and exec still maps its parent's pages (its RSS is
            # the parent's, shared, not new memory): it shows the parent's command line, or none.
            if ppid in members and commands[pid] in ("", commands[ppid]):
                self.clones_skipped += 1
                continue
            counted[pid] = rss
        total = sum(counted.values())
        self.samples += 1
        if total > self.peak_kb:
            self.peak_kb = total
            # What the tree held at its peak: [rss_kb, command line] per process, largest first.
            self.peak_tree = sorted(([rss, commands[pid]] for pid, rss in counted.items()), reverse=True)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--cwd", required=True)
    parser.add_argument("--stdout", required=True)
    parser.add_argument("--stderr", required=True)
    parser.add_argument("--timeout", type=float, default=120.0)
    parser.add_argument("--interval", type=float, default=5.0, help="tree RSS sampling period, ms")
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("no command")

    stdout_fd = os.open(args.stdout, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    stderr_fd = os.open(args.stderr, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    null_fd = os.open(os.devnull, os.O_RDONLY)
    os.chdir(args.cwd)
    actions = [
        (os.POSIX_SPAWN_DUP2, null_fd, 0),
        (os.POSIX_SPAWN_DUP2, stdout_fd, 1),
        (os.POSIX_SPAWN_DUP2, stderr_fd, 2),
    ]

    state = {"done": False}
    sampler_state = TreeSampler()

    started = time.monotonic()
    pid = os.posix_spawn(command[0], command, os.environ, file_actions=actions, setsid=True)
    os.close(null_fd)
    os.close(stdout_fd)
    os.close(stderr_fd)

    timed_out = {"value": False}

    def sampler():
        period = args.interval / 1000.0
        deadline = started + args.timeout
        while not state["done"]:
            sampler_state.sample(pid)
            if time.monotonic() > deadline and not state["done"]:
                timed_out["value"] = True
                try:
                    os.killpg(pid, signal.SIGKILL)
                except OSError:
                    pass
                return
            time.sleep(period)

    thread = threading.Thread(target=sampler, daemon=True)
    thread.start()
    _pid, status, usage = os.wait4(pid, 0)
    wall_ms = (time.monotonic() - started) * 1000.0
    state["done"] = True
    thread.join()

    # Anything the command left running in its session (a daemon, a stray shell) is killed.
    leftovers = sorted(p for p, (_ppid, sid, _rss) in sampler_state.members(pid).items() if sid == pid and p != pid)
    names = [cmdline(leftover) for leftover in leftovers]
    if leftovers:
        try:
            os.killpg(pid, signal.SIGKILL)
        except OSError:
            for leftover in leftovers:
                try:
                    os.kill(leftover, signal.SIGKILL)
                except OSError:
                    pass

    result = {
        "exit_code": os.waitstatus_to_exitcode(status),
        "wall_ms": wall_ms,
        "cpu_ms": (usage.ru_utime + usage.ru_stime) * 1000.0,
        "user_ms": usage.ru_utime * 1000.0,
        "sys_ms": usage.ru_stime * 1000.0,
        "max_rss_kb": usage.ru_maxrss,
        "tree_rss_kb": sampler_state.peak_kb,
        "rss_samples": sampler_state.samples,
        "tree_at_peak": sampler_state.peak_tree,
        "clone_samples_skipped": sampler_state.clones_skipped,
        "timed_out": timed_out["value"],
        "leftovers": names,
    }
    sys.stdout.write(json.dumps(result) + "\n")


if __name__ == "__main__":
    main()
