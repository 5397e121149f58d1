"""How many admission warnings one answer carries, so that a write with hundreds of them
(a flow of many entries, each with an unknown field) stays readable by every client: Python's
`http.client` (under urllib3, so the `kubernetes` package and vcflow's remote mode) refuses a
response with more headers than it allows. Called by `server.routes` for the `Warning`
headers and by `webhook.admissionreview` for an AdmissionReview's `warnings`. Pure.

kube-apiserver's rule (k8s.io/apiserver `pkg/endpoints/filters/warning.go`): duplicates are
dropped; while the texts total at most `MAX_TOTAL` characters they are kept whole; past
that, each is cut to `MAX_ITEM` characters and they are kept until the total reaches
`MAX_TOTAL`, the rest dropped without a word. `capped` follows it, but where it differs:
- the warning that would take the total past `MAX_TOTAL` is dropped with the rest (kube
  keeps it, so its total may end up to `MAX_ITEM` over), and room is kept for the last line;
- the dropped warnings are counted in one last line (`more_line`), so the reader knows some
  are missing (kube logs it on the server's side only);
- at most `MAX_COUNT` lines: kube bounds the characters only, and `MAX_TOTAL` characters of
  short warnings would be more headers than `http.client` reads.
"""

from __future__ import annotations

from collections.abc import Iterable

#: the most characters of warning text in one answer (kube-apiserver's)
MAX_TOTAL = 4 * 1024
#: the characters each warning is cut to once they do not all fit (kube-apiserver's)
MAX_ITEM = 256
#: the most warnings in one answer, the last line counting the dropped ones included
MAX_COUNT = 50
#: room kept in MAX_TOTAL for the last line
_RESERVE = 64


def capped(texts: Iterable[str]) -> list[str]:
    """`texts` without duplicates or empty ones, all of them if they fit in the bounds;
    else as many as fit, each cut to MAX_ITEM characters, and `more_line` of the rest."""
    unique = list(dict.fromkeys(t for t in texts if t))
    if len(unique) <= MAX_COUNT and sum(len(t) for t in unique) <= MAX_TOTAL:
        return unique
    kept: list[str] = []
    total = 0
    for text in unique:
        cut = text[:MAX_ITEM]
        if len(kept) == MAX_COUNT - 1 or total + len(cut) > MAX_TOTAL - _RESERVE:
            break
        kept.append(cut)
        total += len(cut)
    return [*kept, more_line(len(unique) - len(kept))]


def more_line(count: int) -> str:
    """The last line of a capped answer: how many warnings it leaves out."""
    return f"{count} more warning{'' if count == 1 else 's'} not shown"
