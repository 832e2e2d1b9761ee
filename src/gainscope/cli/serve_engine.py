"""``gainscope serve-engine``: an embedded index behind a small HTTP JSON API (see
:mod:`gainscope.search.server`)."""

from __future__ import annotations

import click

from gainscope.cli.common import EXIT_IO, guarded

__all__ = ["serve_engine_cmd"]


@click.command("serve-engine")
@click.argument("index_dir", metavar="DIR", type=click.Path(exists=True, file_okay=False))
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to bind.")
@click.option("--port", type=click.IntRange(min=0, max=65535), default=8765, show_default=True,
              help="Port to listen on (0: any free port, printed on start).")
@guarded
def serve_engine_cmd(index_dir: str, host: str, port: int) -> None:
    """Serve the index DIR (built by gainscope index) over HTTP: GET /search?q=TEXT&top=N&KNOB=VALUE answers
    JSON hits. Prints the search URL on its first line, then serves until interrupted (Ctrl-C)."""
    import signal
    import sys

    from gainscope.search.embedded import EmbeddedEngine
    from gainscope.search.server import engine_server

    engine = EmbeddedEngine(index_dir)
    try:
        server = engine_server(engine, host, port)
    except OSError as exc:
        click.echo(f"error: cannot listen on {host}:{port}: {exc.strerror}; choose another --port (or --port 0)",
                   err=True)
        sys.exit(EXIT_IO)
    bound_port = server.server_address[1]
    click.echo(f"http://{host}:{bound_port}/search", nl=True)
    click.echo(f"serving {index_dir} ({engine.info.documents} documents; knobs "
               f"{', '.join(f'{k}={v:g}' for k, v in engine.knobs.items())}); GET /search?q=TEXT&top=N", err=True)
    sys.stdout.flush()

    def stop(*_: object) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, stop)
    try:
        server.serve_forever(poll_interval=0.1)
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
        engine.close()
