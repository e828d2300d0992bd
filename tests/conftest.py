"""The suite compiles every model anew (a cache hit could hide a compiler bug) and never touches the user's compile
cache: `MINIMLC_CACHE=0`, and a throw-away `MINIMLC_CACHE_DIR` for the tests that turn the cache on."""

import atexit
import os
import shutil
import tempfile

os.environ["MINIMLC_CACHE"] = "0"
os.environ["MINIMLC_CACHE_DIR"] = tempfile.mkdtemp(prefix="minimlc-test-cache-")
atexit.register(shutil.rmtree, os.environ["MINIMLC_CACHE_DIR"], ignore_errors=True)
