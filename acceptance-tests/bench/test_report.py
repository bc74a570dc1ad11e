#!/usr/bin/env python3
"""Unit tests of report.py: the verdict each issue 17 target gets from given figures (no timing is measured here;
the figures are made up). Run by `make lint`: `python3 -m unittest discover -s acceptance-tests/bench`."""

import unittest

import report


def provider_row(kind, n, plan_s, requests=0, rss_kib=0, **extra):
    row = {"bench": "provider", "kind": kind, "n": n, "apply_s": 1.0, "plan_s": plan_s, "plan_runs": [plan_s],
           "destroy_s": 1.0, "requests_per_plan": requests, "plugin_peak_kib": rss_kib}
    row.update(extra)
    return row


def operator_row(n, ratio, **extra):
    row = {"bench": "operator", "n": n, "ratio": ratio, "seconds_per_object": 0.01, "writes_per_object_create": 5.0,
           "writes_noop": 0, "rss_mib": 30.0}
    row.update(extra)
    return row


def verdicts(lines):
    """{target text: verdict} of a targets table."""
    out = {}
    for line in lines:
        cells = [c.strip() for c in line.strip("|").split("|")]
        if len(cells) == 3 and cells[2] in ("holds", "MISSED"):
            out[cells[0]] = cells[2]
    return out


class ProviderTargets(unittest.TestCase):
    def test_each_target_is_judged_from_its_own_figures(self):
        rows = [
            provider_row("terraform_data", 500, 1.0),
            provider_row("floor_item", 500, 2.5),
            provider_row("modelfleet_inference", 500, 6.0, requests=10),
            provider_row("kubernetes_manifest", 500, 120.0, requests=505),
            provider_row("modelfleet_inference", 1000, 12.5, requests=11),
        ]
        got = verdicts(report.provider_tables(rows, [{"plugin": "modelfleet", "seconds": 0.004}]))
        self.assertEqual(got["plan of 500 <= 1.3x `terraform_data`"], "MISSED")
        self.assertEqual(got["plan of 500 >= 5x faster than `kubernetes_manifest`"], "holds")
        self.assertEqual(got["handshake < 10 ms"], "holds")
        self.assertEqual(got["at most one API request per resource per refresh"], "holds")
        linear = [t for t in got if t.startswith("plan cost linear in N")]
        self.assertEqual([got[t] for t in linear], ["holds"])

    def test_a_slow_handshake_many_requests_and_superlinear_cost_are_missed(self):
        rows = [
            provider_row("terraform_data", 500, 1.0),
            provider_row("modelfleet_inference", 500, 1.2, requests=1000),
            provider_row("modelfleet_inference", 1000, 4.0, requests=1000),
        ]
        got = verdicts(report.provider_tables(rows, [{"plugin": "modelfleet", "seconds": 0.012}]))
        self.assertEqual(got["plan of 500 <= 1.3x `terraform_data`"], "holds")
        self.assertEqual(got["handshake < 10 ms"], "MISSED")
        self.assertEqual(got["at most one API request per resource per refresh"], "MISSED")
        linear = [t for t in got if t.startswith("plan cost linear in N")]
        self.assertEqual([got[t] for t in linear], ["MISSED"])


    def test_cpu_columns_and_the_floor_cpu_reference_appear_only_when_recorded(self):
        rows = [
            provider_row("terraform_data", 500, 1.0, terraform_cpu_s=0.6, plugin_cpu_s=0),
            provider_row("floor_item", 500, 2.5, rss_kib=2048, terraform_cpu_s=1.26, plugin_cpu_s=0.45),
        ]
        lines = report.provider_tables(rows, [])
        self.assertIn("| 500 | `floor_item` | 1.00 | 2.50 | 2.50x | 1.00x | - | 2 | 1.26 | 0.45 |", lines)
        self.assertIn("| 500 | `terraform_data` | 1.00 | 1.00 | 1.00x | 0.40x | - | - | 0.6 | - |", lines)
        self.assertIn(
            "| (reference) Terraform's own CPU for the plugin floor of 500 against `terraform_data` | 2.10x | - |", lines
        )
        old = report.provider_tables([provider_row("terraform_data", 500, 1.0), provider_row("floor_item", 500, 2.5)], [])
        self.assertIn("| 500 | `floor_item` | 1.00 | 2.50 | 2.50x | 1.00x | - | - | - | - |", old)
        self.assertFalse(any("own CPU" in line for line in old))


class OperatorTargets(unittest.TestCase):
    def test_the_median_run_is_kept_with_every_ratio_and_the_worst_noop_writes(self):
        rows = [operator_row(100, 1.5), operator_row(100, 1.1, writes_noop=2), operator_row(100, 1.2)]
        (kept,) = report.median_runs(rows)
        self.assertEqual(kept["ratio"], 1.2)
        self.assertEqual(kept["ratios"], [1.1, 1.2, 1.5])
        self.assertEqual(kept["writes_noop"], 2)
        got = verdicts(report.operator_tables(rows))
        self.assertEqual(got["N=100: convergence within 1.3x of the floor"], "holds")
        self.assertEqual(got["N=100: 0 writes on a no-op resync (worst run)"], "MISSED")

    def test_memory_is_judged_on_the_peak_and_on_the_rss_when_no_peak_was_recorded(self):
        with_peak = report.operator_tables([operator_row(1000, 1.1, rss_mib=40.0, peak_mib=70.0)])
        self.assertIn("| RSS <= 64 MiB at 1000 services | 70 MiB (peak) | MISSED |", with_peak)
        without = report.operator_tables([operator_row(1000, 1.1, rss_mib=40.0)])
        self.assertIn("| RSS <= 64 MiB at 1000 services | 40 MiB (at convergence) | holds |", without)


if __name__ == "__main__":
    unittest.main()
