"""The docs' worked examples of `support` stay true whatever the day: each
names the day it was read on, and the service answers it on that day."""
import datetime
import json
import pathlib
import re

import time_machine

ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_the_fleet_pages_support_example_is_what_the_service_answers_on_its_day(inventory):
    text = (ROOT / "docs" / "fleet.md").read_text()
    minor, day, block = re.search(r"A cluster on EKS\s+(\S+),\s+read on (\d{4}-\d\d-\d\d)"
                                  r".*?```json\n(.*?)```", text, re.S).groups()
    shown = json.loads("{" + block + "}")["support"]
    assert shown["lifecycle"]["minor"] == minor
    platform = inventory.platform(control_plane={"provider": "eks"})["name"]
    read_on = datetime.datetime.fromisoformat(day).replace(hour=12, tzinfo=datetime.timezone.utc)
    with time_machine.travel(read_on, tick=True):
        record = inventory.cluster(platform, version=f"{minor}.3")
    assert record["support"] == shown


def test_the_fleet_pages_summary_example_is_what_the_service_answers_on_its_day(
        client, inventory):
    text = (ROOT / "docs" / "fleet.md").read_text()
    day, block = re.search(r"\(a fleet on EKS, read on (\d{4}-\d\d-\d\d)\):.*?```json\n(.*?)```",
                           text, re.S).groups()
    shown = json.loads(block)
    platform = inventory.platform(control_plane={"provider": "eks"})["name"]
    for group in shown["groups"]:
        for n in range(group["count"]):
            inventory.cluster(platform, environment=group["key"]["environment"],
                              version=f"{group['key']['version']}.{n}")
    read_on = datetime.datetime.fromisoformat(day).replace(hour=12, tzinfo=datetime.timezone.utc)
    with time_machine.travel(read_on, tick=True):
        answer = client.get("/kubeclusters:summary",
                            query_string={"group_by": "environment,version,support.status"})
    assert answer.get_json()["groups"] == shown["groups"]
    assert answer.get_json()["total"] == shown["total"]
