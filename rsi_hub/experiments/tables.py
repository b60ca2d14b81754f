"""Plain-text and markdown rendering of the experiment tables (one renderer for all of them)."""

from __future__ import annotations

from collections.abc import Sequence


def format_p(p: float | None) -> str:
    """A p value as the card writes it: two significant digits, scientific below 0.001."""
    if p is None:
        return "—"
    if p >= 0.001:
        return f"{p:.2g}" if p < 0.995 else "1"
    return f"{p:.1e}".replace("e-0", "e-")


def render_table(headers: Sequence[str], rows: Sequence[Sequence[str]], *, markdown: bool) -> str:
    """Render rows of cells as a GitHub markdown table, or as aligned plain text for a terminal."""
    if markdown:
        escaped = [[cell.replace("|", "\\|") for cell in row] for row in rows]
        lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
        lines += ["| " + " | ".join(row) + " |" for row in escaped]
        return "\n".join(lines) + "\n"
    widths = [max(len(str(c)) for c in col) for col in zip(headers, *rows, strict=True)]
    fmt = "  ".join(f"{{:<{w}}}" for w in widths)
    lines = [fmt.format(*headers).rstrip(), fmt.format(*("-" * w for w in widths))]
    lines += [fmt.format(*row).rstrip() for row in rows]
    return "\n".join(lines) + "\n"
