"""The report's sections, in report order: the built-in ones by module (BUILTIN), others registered.

Each section has a name, a title (said here, once, through its Section), `collect(con, opts) -> dict`
(JSON-ready data, stable keys) and `blocks(data, report, full)`, its neutral blocks (or None: the generic
layout); stallscan.report.section.Section. The registry decides what appears and in what order, in every
format. It imports the section modules (lazily); they do not import it, so the imports run one way.
"""

from __future__ import annotations

from stallscan.report.section import REPORT_VERSION, ReportOptions, Section

__all__ = [
    "BUILTIN",
    "ORDER",
    "REPORT_VERSION",
    "SECTIONS",
    "ReportOptions",
    "Section",
    "names",
    "register",
    "sections",
]

SECTIONS: list[Section] = []
# the built-in sections in report order, by the module that defines each as SECTION (imported when
# sections() is first asked for; a section module does not import this one); registered others follow
BUILTIN = {
    "corpus": "stallscan.report.sections.corpus",
    "boundaries": "stallscan.report.sections.boundaries",
    "stalls": "stallscan.report.sections.stalls",
    "threshold": "stallscan.report.sections.threshold",
    "guard": "stallscan.report.sections.guard",
}
ORDER = tuple(BUILTIN)


def register(section: Section) -> Section:
    SECTIONS[:] = [s for s in SECTIONS if s.name != section.name] + [section]
    return section


def names() -> list[str]:
    """The section names in report order, without importing the sections."""
    return list(BUILTIN) + [s.name for s in SECTIONS if s.name not in BUILTIN]


def sections() -> list[Section]:
    """The sections in report order: the built-in ones (each module's SECTION, imported on first use),
    then the registered others."""
    import importlib

    builtin = [importlib.import_module(module).SECTION for module in BUILTIN.values()]
    return builtin + [s for s in SECTIONS if s.name not in BUILTIN]
