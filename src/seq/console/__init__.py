"""The console: a local, read-only web app over the record (`seq ui`), beside the HTML report
(`seq eval report --html`, `Report.to_html`). Needs the `console` extra; nothing here is imported
with `seq` itself."""

from __future__ import annotations

from seq.console.serve import create_app, serve

__all__ = ["create_app", "serve"]
