"""The suite compiles every model anew (a cache hit could hide a compiler bug) and never touches the user's compile
cache: `MINIMLC_CACHE=0`, and a throw-away `MINIMLC_CACHE_DIR` for the tests that turn the cache on."""

import os
import tempfile

os.environ["MINIMLC_CACHE"] = "0"
os.environ["MINIMLC_CACHE_DIR"] = tempfile.mkdtemp(prefix="minimlc-test-cache-")
