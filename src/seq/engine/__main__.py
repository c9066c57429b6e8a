"""`python -m seq.engine FD`: a worker process of the local backend (see `seq.engine.worker`)."""

import sys
from multiprocessing.connection import Connection

from seq.engine.worker_lifecycle import die_with_runner, enter_worker_limits, leave

die_with_runner()  # first: a worker never outlives its runner
assets = enter_worker_limits()  # before a simulator or a thread starts

from seq.engine.wire import Channel  # noqa: E402
from seq.engine.worker import worker_main  # noqa: E402

worker_main(Channel(Connection(int(sys.argv[1]))), assets)
leave()  # the episodes are sent and the envs closed: no need to tear the modules down
