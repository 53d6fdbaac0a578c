"""Finishing the deletes no process is finishing: records left marked by a
delete whose process died, or whose store failed midway, are finished as
they were asked (inventory.store.deletes), by every serving process, parents
first, once they stay marked from one look to the next.

`InterruptedDeletes` is this part of the `Store` (inventory.store)."""
import logging

from inventory.core.errors import HasChildren
from inventory.store.outages import every

log = logging.getLogger(__name__)

DELETES_SWEEP_SECONDS = 30.0  # between two looks for deletes no process is finishing


class InterruptedDeletes:
    """The finisher of interrupted deletes."""

    def finish_interrupted_deletes(self, only=None):
        """Finish the deletes that no process is finishing (records left
        marked: their process died, or its store failed midway), parents
        first, each as it was asked (a forced delete's cascade completes; an
        unforced delete of a record that has children is undone, as it
        would have been). `only`: just these (resource, key) pairs, those
        marked at an earlier look. Answers the pairs marked now."""
        found = set()
        for resource in self.listed():
            marked = resource.marked(self.events.shared)
            found.update((resource.spec.name, doc["_id"]) for doc in marked)
            due = [doc for doc in marked
                   if only is None or (resource.spec.name, doc["_id"]) in only]
            if due:  # one line a kind: a cascade's records are many
                log.warning("Finishing %d interrupted delete(s) of %ss (%s%s).", len(due),
                            resource.kind, ", ".join(repr(doc["_id"]) for doc in due[:3]),
                            ", ..." if len(due) > 3 else "")
            for doc in due:
                try:
                    resource.finish_delete(doc)
                except HasChildren:
                    pass  # an unforced delete's, restored
        return found

    def start_finishing_deletes(self):
        """In this process, for its life: finish interrupted deletes. The
        embedded store's at once (what is marked at start, an earlier process
        left); then every DELETES_SWEEP_SECONDS those still marked since the
        last look (a delete under way is left to its request)."""
        seen = None if not self.events.shared else set()

        def finish():
            nonlocal seen
            seen = self.finish_interrupted_deletes(seen)
        every(DELETES_SWEEP_SECONDS, "Finishing interrupted deletes", "delete-finisher", finish)
