"""What the tests share; no test module imports another (tests/test_layout.py).

* :mod:`~tests.helpers.server`: the local HTTP server stack (the request model,
  :class:`~tests.helpers.server.Reply`, the raw-socket
  :class:`~tests.helpers.server.HostileServer` and its simple face
  :class:`~tests.helpers.server.ScriptedServer`), with :mod:`~tests.helpers.tls`
  and, for volume, :mod:`~tests.helpers.loop_server` (asyncio, keep-alive; the
  crawl and latency benchmarks serve their sites with it);
* :mod:`~tests.helpers.names`: ``*.test`` names resolved to loopback;
* :mod:`~tests.helpers.crawl`: the crawl helper (:func:`~tests.helpers.crawl.run_crawl`,
  the recording spiders, the crawl tests' settings and checks) and the crawl of a
  worker process (:func:`~tests.helpers.crawl.crawl_in_process`);
* :mod:`~tests.helpers.bodies`: the robots.txt body builder, hostile shapes
  included (``benchmarks/hostile.py`` measures them);
* :mod:`~tests.helpers.cache`, :mod:`~tests.helpers.fakes`,
  :mod:`~tests.helpers.memory`, :mod:`~tests.helpers.corpus` (the real files),
  :mod:`~tests.helpers.redis_server`;
* :mod:`~tests.helpers.oracle`: brute-force answers to check the matcher against,
  and :mod:`~tests.helpers.work`: the work a check charges to its budget;
* worker processes, run as ``python -m tests.helpers.<name>`` with the repository
  root on ``PYTHONPATH`` (:func:`~tests.helpers.processes.worker_command`):
  ``fleet_crawler``, ``jobdir_crawler``, ``redis_worker``, ``sqlite_worker``.

Nothing is imported here, so a benchmark or a worker loads only what it uses.
"""
