"""Tables rendered as Markdown or HTML, and a plain HTML page around them: shared by every report view."""

from __future__ import annotations

import html
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

PAGE_STYLE = """
body { font-family: system-ui, sans-serif; margin: 2rem auto; max-width: 72rem; color: #222; }
table { border-collapse: collapse; margin: 0.5rem 0 1.5rem; }
th, td { border: 1px solid #ccc; padding: 0.25rem 0.6rem; vertical-align: top; }
th { background: #f3f3f3; }
td.right, th.right { text-align: right; font-variant-numeric: tabular-nums; }
.PASS { color: #11731f; font-weight: 600; } .FAIL { color: #b00020; font-weight: 600; }
.UNCALIBRATED, .INCONCLUSIVE { color: #8a5a00; font-weight: 600; }
.PROMOTE { color: #11731f; font-weight: 600; } .DROP { color: #b00020; font-weight: 600; }
pre { background: #f6f6f6; padding: 0.6rem; overflow-x: auto; }
"""


@dataclass
class Table:
    """Headers and rows of text; `align` gives `left` or `right` per column (default left)."""

    headers: Sequence[str]
    rows: Sequence[Sequence[str]] = field(default_factory=list)
    align: Sequence[str] | None = None
    title: str | None = None

    def alignment(self, column: int) -> str:
        return (self.align[column] if self.align and column < len(self.align) else "left") or "left"


# What turns text into markup where Markdown is rendered: an HTML tag (or comment, or autolink)
# opens with `<` and a letter, `/`, `!` or `?`; an inline link with `](`.
_TAG_START = re.compile(r"<(?=[A-Za-z/!?])")


def markdown_text(text: object) -> str:
    """`text` (a name or message from user code) made inert in Markdown: it shows as written,
    never as HTML or a link, as the HTML views escape it."""
    return _TAG_START.sub("&lt;", str(text)).replace("](", "]\\(")


def markdown_cell(text: object) -> str:
    """`text` for one cell of a Markdown table: inert, one line, no column break."""
    return markdown_text(text).replace("|", "\\|").replace("\n", " ")


def markdown_code_block(text: str) -> list[str]:
    """`text` as a fenced code block whose fence no run of backticks in it can close."""
    fence = "`" * max(3, 1 + max((len(run) for run in re.findall(r"`+", text)), default=0))
    return [fence, text, fence]


def to_markdown(table: Table) -> str:
    """A GitHub-flavoured Markdown table (with a `### title` line when the table has one)."""
    lines = [f"### {markdown_text(table.title)}", ""] if table.title else []
    lines.append("| " + " | ".join(markdown_cell(h) for h in table.headers) + " |")
    lines.append(
        "|"
        + "|".join("---:" if table.alignment(i) == "right" else "---" for i in range(len(table.headers)))
        + "|"
    )
    lines += ["| " + " | ".join(markdown_cell(c) for c in row) + " |" for row in table.rows]
    return "\n".join(lines) + "\n"


def to_html(table: Table, cell_classes: dict[str, str] | None = None) -> str:
    """An HTML table; a cell whose text is a key of `cell_classes` gets that CSS class."""
    classes = cell_classes or {}

    def cell(tag: str, text: object, column: int) -> str:
        names = [
            n
            for n in ("right" if table.alignment(column) == "right" else "", classes.get(str(text), ""))
            if n
        ]
        attribute = f' class="{" ".join(names)}"' if names else ""
        return f"<{tag}{attribute}>{html.escape(str(text))}</{tag}>"

    parts = [f"<h3>{html.escape(table.title)}</h3>"] if table.title else []
    parts.append("<table>")
    parts.append("<tr>" + "".join(cell("th", h, i) for i, h in enumerate(table.headers)) + "</tr>")
    for row in table.rows:
        parts.append("<tr>" + "".join(cell("td", c, i) for i, c in enumerate(row)) + "</tr>")
    parts.append("</table>")
    return "\n".join(parts) + "\n"


def html_page(title: str, body: str) -> str:
    """A self-contained HTML document (no scripts, no external assets)."""
    return (
        '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{html.escape(title)}</title><style>{PAGE_STYLE}</style></head>\n"
        f"<body>\n{body}</body></html>\n"
    )
