"""Tests of report.py: python3 -m unittest discover -s bulkhead-benchmarks/scripts (CI runs it).

The charts and sections report.py took over from the Java code are checked against what that code
wrote: the soak of 2026-12-01 (its committed summary.md and soak.svg) and a synthetic peer run
(testdata/peer-synthetic/). Each test fails on a change to what a figure, verdict or pixel reads.
"""
import importlib.util
import json
import os
import shutil
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location("report", os.path.join(HERE, "report.py"))
report = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(report)
SOAK = os.path.join(HERE, "..", "results", "2026-12-01-soak")


def line(start, per_minute, wobble, minutes):
    """A sample every 10 s: a straight line with a wobble of +-wobble around it."""
    return [(i / 6.0, start + per_minute * i / 6.0 + (wobble if i % 2 == 0 else -wobble))
            for i in range(minutes * 6 + 1)]


class TrendTest(unittest.TestCase):
    def test_a_series_that_only_wobbles_is_flat(self):
        t = report.trend("heap", "MB", line(40, 0, 1.5, 9), 4, 0.10)
        self.assertAlmostEqual(t["mean"], 40, delta=0.2)
        self.assertTrue(report.trend_verdict(t).startswith("**flat**"))

    def test_a_steady_climb_above_the_tolerance_is_growing_with_its_slope(self):
        t = report.trend("fds", "fds", line(100, 3, 1, 9), 4, 0.05)
        self.assertAlmostEqual(t["slope"], 3, delta=0.05)
        self.assertAlmostEqual(t["rise"], 27, delta=0.5)
        verdict = report.trend_verdict(t)
        self.assertTrue(verdict.startswith("**growing**"), verdict)
        self.assertIn("slope +3.00 fds/min", verdict)

    def test_a_fall_is_not_called_flat_either(self):
        t = report.trend("threads", "threads", line(200, -2, 0, 9), 2, 0.05)
        self.assertTrue(report.trend_verdict(t).startswith("**falling**"))

    def test_too_few_points_are_not_judged(self):
        t = report.trend("chat p99", "ms", [(2, 300), (3, 900)], 5, 0.25)
        self.assertEqual(report.trend_verdict(t), "too few points to judge (2)")


class FormatTest(unittest.TestCase):
    def test_general_keeps_javas_significant_digits(self):
        self.assertEqual(report.general(4.0, 3), "4.00")
        self.assertEqual(report.general(-0.0216, 3, plus=True), "-0.0216")
        self.assertEqual(report.general(0.0288, 3, plus=True), "+0.0288")
        self.assertEqual(report.general(-143.4, 3, plus=True), "-143")
        self.assertEqual(report.general(0.5, 2), "0.50")
        self.assertEqual(report.general(0.00001234, 3), "1.23e-05")

    def test_fixed_rounds_halves_up_from_the_shortest_decimal(self):
        self.assertEqual(report.fixed(0.25), "0.3")
        self.assertEqual(report.fixed(0.15), "0.2")
        self.assertEqual(report.fixed(-0.04), "-0.0")
        self.assertEqual(report.plain(30.0), "30")
        self.assertEqual(report.plain(1.25), "1.3")


class SoakTest(unittest.TestCase):
    """The committed soak, redrawn: its samples.csv and minutes.csv hold p99s rounded to 0.1 ms,
    which moves one fitted slope in its third digit; its chart predates the two-line subtitle."""

    def setUp(self):
        self.dir = tempfile.mkdtemp()
        for name in ["samples.csv", "minutes.csv", "soak.json"]:
            shutil.copy(os.path.join(SOAK, name), self.dir)
        report.soak(self.dir)

    def tearDown(self):
        shutil.rmtree(self.dir)

    def read(self, base, name):
        with open(os.path.join(base, name)) as f:
            return f.read().split("\n")

    def test_the_summary_reads_as_the_java_code_wrote_it(self):
        ours, theirs = self.read(self.dir, "summary.md"), self.read(SOAK, "summary.md")
        differ = [(a, b) for a, b in zip(ours, theirs) if a != b]
        self.assertEqual(len(ours), len(theirs))
        self.assertEqual(len(differ), 1, differ)
        self.assertIn("slope -4.34 ms/min", differ[0][0])
        self.assertIn("slope -4.33 ms/min", differ[0][1])

    def test_the_chart_is_drawn_as_the_java_code_drew_it(self):
        ours = open(os.path.join(self.dir, "soak.svg")).read()
        theirs = open(os.path.join(SOAK, "soak.svg")).read()
        cut = "reports</text>\n<text x=\"64.0\" y=\"57.0\" text-anchor=\"start\" fill=\"#57606a\" font-size=\"12\" font-weight=\"400\">"
        ours = ours.replace(cut, "reports ").replace('y="42.0" text-anchor="start" fill="#57606a"', 'y="44.0" text-anchor="start" fill="#57606a"')
        self.assertEqual(ours, theirs)


class PeerTest(unittest.TestCase):
    def setUp(self):
        self.dir = os.path.join(HERE, "testdata", "peer-synthetic")
        with open(os.path.join(self.dir, "peer.json")) as f:
            self.peer = json.load(f)

    def test_the_section_reads_as_the_java_code_wrote_it(self):
        with open(os.path.join(self.dir, "expected.md")) as f:
            expected = f.read()
        self.assertEqual(report.peer_markdown(self.peer, "bulkhead-benchmarks/results/x/peer-experiment.svg"), expected)

    def test_the_chart_is_drawn_as_the_java_code_drew_it(self):
        with open(os.path.join(self.dir, "expected.svg")) as f:
            expected = f.read()
        self.assertEqual(report.peer_svg(self.peer), expected)


class SplicerTest(unittest.TestCase):
    def test_a_section_replaces_only_its_own_block(self):
        text = "intro\n<!-- report.py: a -->\nold\n<!-- report.py: end a -->\nmiddle\n"
        out = report.splice(text, {"a": ["new", "lines"]})
        self.assertEqual(out, "intro\n<!-- report.py: a -->\nnew\nlines\n<!-- report.py: end a -->\nmiddle\n")

    def test_a_section_without_a_block_is_added_at_the_end(self):
        self.assertEqual(report.splice("intro\n", {"b": ["x"]}), "intro\n\n<!-- report.py: b -->\nx\n<!-- report.py: end b -->\n")

    def test_the_committed_pages_are_what_the_committed_results_give(self):
        for command, page in [("benchmarks", "BENCHMARKS.md"), ("experiments", os.path.join("docs", "experiments.md"))]:
            with open(os.path.join(report.ROOT, page)) as f:
                text = f.read()
            sections = report.benchmarks_sections() if command == "benchmarks" else report.experiments_sections()
            self.assertEqual(report.splice(text, sections), text, page + ": run report.py " + command)


if __name__ == "__main__":
    unittest.main()
