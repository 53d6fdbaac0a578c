"""The docs page works with no internet: its assets come from the service."""
import re
import shutil
import subprocess
import threading

import pytest
from werkzeug.serving import make_server

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


def test_docs_page_loads_only_assets_the_service_serves(anonymous):
    page = anonymous.get("/docs").get_data(as_text=True)
    sources = re.findall(r'(?:src|href)="([^"]+)"', page)
    assert sources and all(s.startswith("/docs/assets/") for s in sources), sources
    for source in sources:
        assert anonymous.get(source).status_code == 200, source


@pytest.mark.slow
@pytest.mark.skipif(CHROMIUM is None, reason="no chromium here (scripts/test --all installs "
                    "Debian's chromium where it can)")
def test_docs_page_lists_the_operations_in_a_headless_browser(app, tmp_path):
    server = make_server("127.0.0.1", 0, app, threaded=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_port}/docs"
        flags = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                 "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync",
                 f"--user-data-dir={tmp_path / 'profile'}", "--virtual-time-budget=15000"]
        dom = subprocess.run(flags + ["--dump-dom", url], capture_output=True, text=True,
                             timeout=120).stdout
        # a screenshot for people to look at; it stays out of the repository
        subprocess.run(flags + ["--window-size=1280,2000", f"--screenshot={tmp_path / 'docs.png'}",
                                url], capture_output=True, timeout=120)
    finally:
        server.shutdown()
    for text in ("/kubeclusters/{cluster}/scans", "/organizations", "List clusters, in name order",
                 "Record a scan of a cluster", "Authorize"):
        assert text in dom, text
