"""Type stubs of the Rust extension sci._sci (see the package docstring)."""

import os
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

import numpy as np
import numpy.typing as npt

WIRE_VERSION: int

ArrayLike = npt.ArrayLike
Inputs = Union[ArrayLike, Dict[str, ArrayLike]]
Outputs = Union[npt.NDArray[np.float32], Dict[str, npt.NDArray[np.float32]]]
PathLike = Union[str, os.PathLike]

class SciError(Exception):
    """Base class of every error sci raises."""

class CompileError(SciError):
    """The model could not be compiled (unreadable, an unsupported op, a bad option)."""

class PlanError(SciError):
    """A plan could not be loaded, saved or run."""

class InputError(SciError):
    """An input does not fit the plan (element type, shape, names, values)."""

class PeerError(SciError):
    """The session with the peer failed (no peer, TLS, mismatched plan, peer gone)."""

class Plan:
    """A compiled plan: the public program and, unless a client's view, the weights."""

    @property
    def is_client_view(self) -> bool: ...
    @property
    def hash(self) -> str:
        """The hash of the public part (hex), compared in the handshake."""
    @property
    def inputs(self) -> List[Tuple[str, List[int]]]:
        """Name and shape of each input, in order."""
    @property
    def outputs(self) -> List[Tuple[str, List[int]]]:
        """Name and shape of each output, in order."""
    @property
    def report(self) -> Optional[Dict[str, Any]]:
        """The compile report (as sci-compile --report); None for a loaded plan."""
    def save(self, path: PathLike) -> None:
        """Writes the plan (the format sci-run reads)."""
    def client_view(self) -> "Plan":
        """The same program without the server's weights."""
    def predict_cost(
        self, net: Optional[str] = None, *, threads: Optional[int] = None, inferences: int = 1
    ) -> Dict[str, Any]:
        """The cost model's bytes and rounds per inference (and time on `net`)."""
    def run_cleartext(self, x: Inputs) -> Outputs:
        """The reference interpreter: the result secure runs reproduce bit for bit."""
    def run_local(self, x: Inputs, *, threads: Optional[int] = None, ot: Optional[str] = None) -> Outputs:
        """Both parties in this process over loopback TCP (needs the weights)."""

class Server:
    """Serves a plan to clients until Ctrl-C or stop()."""

    def __init__(
        self,
        plan: Plan,
        *,
        listen: str = "127.0.0.1:7070",
        key: Optional[PathLike] = None,
        cert: Optional[PathLike] = None,
        peer_cert: Optional[PathLike] = None,
        max_sessions: int = 4,
        threads: Optional[int] = None,
        ot: Optional[str] = None,
        timeout: float = 600.0,
        connect_timeout: float = 30.0,
        session_timeout: float = 3600.0,
        insecure_plaintext: bool = False,
    ) -> None: ...
    @property
    def address(self) -> str:
        """The bound address, "IP:PORT"."""
    @property
    def sessions(self) -> List[Dict[str, Any]]:
        """One report per finished session."""
    def serve(self) -> int:
        """Blocks serving; returns the number of sessions accepted once stopped."""
    def stop(self) -> None:
        """Stops serve(): no new sessions; running ones finish."""

class Client:
    """The client's side: one session across infer() calls."""

    def __init__(
        self,
        plan: Plan,
        *,
        connect: str = "127.0.0.1:7070",
        key: Optional[PathLike] = None,
        cert: Optional[PathLike] = None,
        peer_cert: Optional[PathLike] = None,
        threads: Optional[int] = None,
        ot: Optional[str] = None,
        timeout: float = 600.0,
        connect_timeout: float = 30.0,
        session_timeout: float = 3600.0,
        insecure_plaintext: bool = False,
        expected_inferences: int = 1,
    ) -> None: ...
    def infer(self, x: Inputs) -> Outputs:
        """One inference (or one per item of a leading batch axis) with the server."""
    @property
    def last_report(self) -> Optional[Dict[str, Any]]:
        """The last inference's report, measured beside predicted."""
    @property
    def is_open(self) -> bool: ...
    def close(self) -> None:
        """Ends the session cleanly (idempotent)."""
    def __enter__(self) -> "Client": ...
    def __exit__(self, *exc: Any) -> bool: ...

def compile_file(
    path: PathLike,
    *,
    validation: Optional[PathLike] = None,
    bits: Optional[int] = None,
    scale: Optional[int] = None,
    backend: str = "rlwe",
    net: Optional[str] = None,
    batch: int = 1,
    threads: Optional[int] = None,
    ot: Optional[str] = None,
    mill_radix: Optional[int] = None,
    outputs: Sequence[str] = (),
    tolerance: float = 0.5,
) -> Plan:
    """Compiles the model file at `path` as sci-compile does."""

def load(path: PathLike) -> Plan:
    """Loads a plan written by sci-compile or Plan.save."""

def keygen() -> Tuple[str, str, str]:
    """A fresh TLS identity: (key_pem, cert_pem, fingerprint)."""
