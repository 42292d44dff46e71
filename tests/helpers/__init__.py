"""What test modules of several folders share: the checkout's path, the tiny course, the public
tests' child runs, markdown fences. A test module never imports another test module; it imports
from here, from a helper beside it, or from a conftest.py."""
