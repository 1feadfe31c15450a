"""``python -m engine.experiments precompute --out DIR``: every experiment at its defaults on
the held-out texts, for the built-in model (or ``--model PATH``), written where the page
reads it (``engine.experiments.stored``)."""

from __future__ import annotations

import argparse
import sys

from engine.config import EXPERIMENT_TEXTS


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m engine.experiments")
    commands = parser.add_subparsers(dest="command", required=True)
    pre = commands.add_parser("precompute", help="write the default experiments' results")
    pre.add_argument("--out", help="folder to write (default: where the page reads)")
    pre.add_argument("--model", help="a model folder or .gguf file (default: SmolLM2)")
    pre.add_argument("--text", nargs="+", choices=EXPERIMENT_TEXTS, default=EXPERIMENT_TEXTS)
    args = parser.parse_args(argv)

    from engine.dumps.live import load_live_model
    from engine.errors import EngineError
    from engine.experiments.stored import default_folder, precompute

    try:
        live = load_live_model(args.model)
    except EngineError as error:
        print(error, file=sys.stderr)
        return 1
    out = precompute(live, args.out or default_folder(), tuple(args.text))
    print(f"written: {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
