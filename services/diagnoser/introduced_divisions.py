"""The zero-unguarded divisions a changed function introduced: unguarded in the candidate's version of the
function and not already unguarded (same operator, same divisor) in the base's."""

from __future__ import annotations

from services.diagnoser.code_diff import FunctionChange
from services.diagnoser.division_sites import DivisionSite, unguarded_division_sites
from services.diagnoser.revision_functions import RevisionFunctions


def introduced_unguarded_divisions(
    change: FunctionChange, base: RevisionFunctions, candidate: RevisionFunctions
) -> list[DivisionSite]:
    """Unguarded divisions of the candidate function that the base version did not have unguarded."""
    candidate_sites = _unguarded_sites(candidate, change)
    base_sites = _unguarded_sites(base, change)
    already_unguarded = {(site.operator, site.divisor) for site in base_sites}
    return [site for site in candidate_sites if (site.operator, site.divisor) not in already_unguarded]


def _unguarded_sites(revision: RevisionFunctions, change: FunctionChange) -> list[DivisionSite]:
    found = revision.function(change.file, change.qualified_name)
    if found is None:
        return []
    source, function = found
    return unguarded_division_sites(function, source)
