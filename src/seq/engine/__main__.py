"""`python -m seq.engine FD`: a worker process of the local backend (see `seq.engine.worker`)."""

import sys
from multiprocessing.connection import Connection

from seq.engine.worker import worker_main

worker_main(Connection(int(sys.argv[1])))
