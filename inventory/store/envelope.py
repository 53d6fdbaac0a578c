"""The embedded store's envelope: the counts of records (clusters, scans)
it is measured to serve within its promises on one worker, as the
resources declare them; past it, it still serves, and says so."""
import logging

log = logging.getLogger(__name__)


class Envelope:
    """The store's size against its envelope (the embedded store only)."""

    def enveloped(self):
        """The resources whose counts the embedded store's envelope bounds."""
        return [resource for resource in self.listed() if resource.envelope is not None]

    def envelope(self):
        """On the embedded store, {<resource>: count, ..., "within"}
        ({"clusters", "scans", "within"}): its size against the envelope its
        resources declare; None on MongoDB (no such bound)."""
        if self.events.shared:
            return None
        counts = {resource.spec.name: resource.collection.estimated_document_count()
                  for resource in self.enveloped()}
        return {**counts, "within": all(counts[resource.spec.name] <= resource.envelope
                                        for resource in self.enveloped())}

    def warn_if_past_envelope(self):
        """At the embedded store's start: one warning if it holds more than
        its envelope."""
        envelope = self.envelope()
        if not envelope["within"]:
            log.warning("The embedded store holds %s, past the envelope it is measured for "
                        "(%s on one worker): requests and background work may hold the event "
                        "loop longer than promised; use MongoDB (MONGODB_URI) at this size.",
                        ", ".join(f"{envelope[r.spec.name]} {r.spec.name}"
                                  for r in self.enveloped()),
                        ", ".join(f"{r.envelope} {r.spec.name}" for r in self.enveloped()))
