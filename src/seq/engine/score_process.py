"""`python -m seq.engine.score_process FD`: the process that runs a benchmark's `@seq.score` where its
workers ran (its image's Python, its volume, its secrets, its memory limit); see `seq.engine.scoring`."""

import sys
from multiprocessing.connection import Connection

from seq.engine.worker_lifecycle import enter_worker_limits

enter_worker_limits()  # before a simulator or a thread starts, as in a worker

from seq.engine.scoring import serve_scores  # noqa: E402
from seq.engine.wire import Channel  # noqa: E402

serve_scores(Channel(Connection(int(sys.argv[1]))))
