"""Every script in bench/ still runs: each one as a user would run it, at its smallest settings, with --json.

Nobody runs the benchmarks in CI, so these tests keep them from rotting. They check that a script finishes, prints
one JSON object on stdout and that the object has the keys the project promises; the figures themselves are not
judged here (a run this small measures nothing).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT_S = 120
# The same evidence-id pattern as bench/locomo_recall.py ("D8:6; D9:17", "D:11:26", "D30:05").
EVIDENCE = re.compile(r"D\s*:?\s*(\d+)\s*:\s*(\d+)")
# The q8 model is the default and is ready at once; the static profile derives a table for a minute on first use.
EMBEDDER = "local:minilm-q8"


def run_bench(name: str, *args: str | Path) -> dict[str, Any]:
    """Run bench/NAME.py from the repository root and return its one JSON object."""
    done = subprocess.run(
        [sys.executable, str(ROOT / "bench" / f"{name}.py"), *map(str, args), "--json"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
    )
    assert done.returncode == 0, f"bench/{name}.py exited with {done.returncode}:\n{done.stderr[-4000:]}"
    # json.loads rejects anything around the object, so progress lines on stdout would fail here too.
    figures = json.loads(done.stdout)
    assert isinstance(figures, dict), f"bench/{name}.py printed {type(figures).__name__}, not one JSON object"
    return figures


def numbers(value: Any) -> list[float]:
    """Every number in a JSON value, however deeply nested (booleans are not figures)."""
    if isinstance(value, dict):
        return [n for item in value.values() for n in numbers(item)]
    if isinstance(value, list):
        return [n for item in value for n in numbers(item)]
    if isinstance(value, int | float) and not isinstance(value, bool):
        return [float(value)]
    return []


def locomo_dev() -> Path | None:
    """The LoCoMo dev split, looked for the way bench/locomo_recall.py looks (a shared/ folder above the repo)."""
    for up in (ROOT, *ROOT.parents):
        candidate = up / "shared" / "data" / "locomo-dev" / "locomo-dev.json"
        if candidate.exists():
            return candidate
    return None


@pytest.fixture(scope="module")
def tiny_locomo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, int, int]:
    """A LoCoMo-format file in a temporary folder: the first conversation's first two sessions, and the questions
    whose evidence lies in them. Returns the file, its turn count and its question count.

    The data is evaluation material under CC BY-NC: it is read in place and the subset never enters the repo.
    """
    source = locomo_dev()
    if source is None:
        pytest.skip("the LoCoMo dev split (shared/data/locomo-dev/locomo-dev.json) is not on this machine")
    sample = json.loads(source.read_text("utf-8"))[0]
    kept = {1, 2}
    conversation = {}
    for key, value in sample["conversation"].items():
        session = re.fullmatch(r"session_(\d+)(_date_time)?", key)
        if session is None or int(session.group(1)) in kept:
            conversation[key] = value
    turns = sum(len(v) for k, v in conversation.items() if re.fullmatch(r"session_\d+", k))

    def answerable(qa: dict[str, Any]) -> bool:
        sessions = [int(s) for entry in qa.get("evidence", []) for s, _ in EVIDENCE.findall(entry)]
        return bool(sessions) and set(sessions) <= kept

    qa = [item for item in sample["qa"] if answerable(item)]
    path = tmp_path_factory.mktemp("locomo") / "locomo-tiny.json"
    path.write_text(json.dumps([{"sample_id": sample["sample_id"], "conversation": conversation, "qa": qa}]), "utf-8")
    return path, turns, len(qa)


def test_retrieval_reports_latencies_per_size(tmp_path: Path) -> None:
    figures = run_bench(
        "retrieval",
        *("--sizes", "300", "--other-users", "3", "--per-other", "5", "--queries", "5", "--writes", "3"),
        *("--embedder", EMBEDDER, "--db-dir", tmp_path),
    )
    size = figures["sizes"]["300"]
    for key in (
        "e2e_p50_ms",
        "e2e_p95_ms",
        "vec_p50_ms",
        "baseline_p50_ms",
        "vec_vs_baseline",
        "write_p50_ms",
        "first_query_ms",
        "bytes_per_learning",
        "peak_rss_mb",
    ):
        assert isinstance(size[key], int | float), key
    assert size["learnings_in_file"] == 300 + 3 * 5 + 3  # the user's, the others', and the timed writes
    assert size["bytes_per_learning_by_table"]["learnings"] > 0


def test_retrieval_split_reports_layers(tmp_path: Path) -> None:
    run_bench(
        "retrieval",
        *("--sizes", "300", "--other-users", "2", "--per-other", "3", "--queries", "3", "--writes", "1"),
        *("--embedder", EMBEDDER, "--db-dir", tmp_path),
    )
    figures = run_bench(
        "retrieval_split",
        *(tmp_path / "bench.db", "--queries", "3", "--passes", "1", "--rounds", "1", "--embedder", EMBEDDER),
    )
    assert list(figures["layers_us"]) == [
        "search",
        "+ ranking and rows",
        "+ items and block",
        "+ SDK edge",
        "+ bookkeeping",
    ]
    assert figures["vectors"] == 300 + 1  # the user's learnings and the timed write
    assert all(value is None or value > 0 for value in figures["pieces_us"].values())


def test_locomo_recall_reports_recall_per_retriever(tiny_locomo: tuple[Path, int, int]) -> None:
    data, _, questions = tiny_locomo
    figures = run_bench("locomo_recall", "--data", data, "--embedder", EMBEDDER)
    for mode in ("hybrid", "vector", "bm25"):
        for k in ("recall@5", "recall@10"):
            assert 0.0 <= figures[mode][k] <= 1.0, (mode, k)
    assert figures["questions"] == questions


def test_junk_reports_what_the_observer_stored(tiny_locomo: tuple[Path, int, int]) -> None:
    data, turns, _ = tiny_locomo
    figures = run_bench("junk", "--data", data, "--embedder", EMBEDDER, "--examples", "1")
    assert figures["turns"] == turns
    assert figures["stored"] >= 0
    assert 0.0 <= figures["near_duplicate_fraction"] <= 1.0
    # The docstring's promise: the observer never stores a restatement of what was recalled for the same turn.
    assert figures["reextracted"] == 0
    assert "exclamation" not in figures["deprecated_by_feedback"]


# A tiny generic catalog: name -> (description, first query, second query).
TOOLS = {
    "weather_forecast": ("Get the weather forecast for a city", "Will it rain in Paris tomorrow?", "Cold in Oslo?"),
    "currency_convert": ("Convert an amount between currencies", "How many yen is 50 dollars?", "200 euros in pounds"),
    "flight_search": ("Search flights between two airports", "Flights from Boston to Denver", "Cheap flights to Rome"),
    "recipe_finder": ("Find cooking recipes by ingredient", "What can I cook with leeks?", "A lasagne recipe please"),
    "stock_quote": ("Get the latest stock price for a ticker", "What is Apple trading at?", "Current price of TSLA"),
    "translate_text": ("Translate text into another language", "Say good morning in Spanish", "This in German"),
    "news_headlines": ("Latest news headlines on a topic", "What's new in climate policy?", "Top technology headlines"),
    "calendar_event": ("Create an event in the calendar", "Dentist on Friday at 3pm", "Schedule a meeting on Monday"),
    "send_email": ("Send an email to a contact", "Email Sam that I'm running late", "Send the report to my manager"),
    "unit_convert": ("Convert between units of measurement", "How many grams in 3 ounces?", "10 miles in kilometres"),
    "movie_showtimes": ("Find cinema showtimes for a film", "When is Dune playing tonight?", "Pixar film times"),
    "hotel_booking": ("Book a hotel room in a city", "A room in Lisbon for two nights", "A hotel near Berlin station"),
}


def test_tool_learning_reports_blocks_gain_and_control(tmp_path: Path) -> None:
    tools = tmp_path / "tools.jsonl"
    tools.write_text("".join(json.dumps({"name": n, "description": d}) + "\n" for n, (d, _, _) in TOOLS.items()))
    # Two queries per tool, so the held-out control tools (a random share of them) always have queries too.
    queries = tmp_path / "queries.jsonl"
    rounds = [[json.dumps({"query": q[i], "tools": [n]}) + "\n" for n, (_, *q) in TOOLS.items()] for i in (0, 1)]
    queries.write_text("".join(line for lines in rounds for line in lines))
    figures = run_bench(
        "tool_learning",
        *("--tools", tools, "--queries", queries),
        *("--sessions", "2", "--per-session", "3", "--block", "1", "--users", "2"),
    )
    assert len(figures["blocks"]) == 2
    for block in figures["blocks"]:
        assert {"sessions", "recall@1", "recall@5", "baseline_recall@5"} <= block.keys()
    assert isinstance(figures["gain_recall@5_last_block"], int | float)
    assert isinstance(figures["control_delta_recall@5"], int | float)


def test_capture_reports_each_capture_path() -> None:
    figures = run_bench("capture", "--count", "1", "--embedder", EMBEDDER)
    # The four measured paths and the embedding-only floor the docstring names.
    paths = {"embed_only", "tool_save_new", "tool_save_replay", "observe_teaching", "observe_plain"}
    assert paths <= figures["figures_ms"].keys()
    assert numbers(figures["figures_ms"])


def test_tool_signals_reports_signal_and_routing_latency() -> None:
    figures = run_bench("tool_signals", "--signals", "1", "--tools", "10", "--queries", "1", "--pairs", "1")
    for key in ("strong_signal_ms", "strong_signal_full_sync_ms", "route_ms", "route_with_pairs_ms"):
        assert numbers(figures[key]), key


def test_gate_reports_speed_and_refusals_per_corpus() -> None:
    figures = run_bench("gate", "--repeat", "1")
    assert figures["gate"], "no corpus measured"
    for corpus, row in figures["gate"].items():
        assert {"refused_pct", "p50_us", "p95_us"} <= row.keys(), corpus
    for part in ("tuning", "holdout"):
        labelled = figures["labelled"][part]
        assert {"secret", "pii", "injection", "benign"} <= labelled["classes"].keys(), part
        assert len(labelled["harmful_by_lang"]) >= 5 and labelled["p50_us"] > 0, part


def test_gate_reads_a_labelled_jsonl_file(tmp_path: Path) -> None:
    data = tmp_path / "mine.jsonl"
    rows = [
        {"text": "The user prefers metric units.", "class": "benign", "kind": "hard", "lang": "en"},
        {"text": "password=Hops2024!", "class": "secret", "kind": "prose", "lang": "en"},
    ]
    data.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    figures = run_bench("gate", "--repeat", "1", "--data", data)
    assert figures["classes"]["secret"]["refused_pct"] == 100.0
    assert figures["classes"]["benign"]["refused_pct"] == 0.0
    saved = run_bench("gate", "--repeat", "1", "--data", data, "--through-save")
    assert saved["through"] == "loop.save()" and saved["classes"]["secret"]["refused_pct"] == 100.0


# Slow because it always embeds its fixed 1,000-text batch, with 1 and with 2 threads (about 10 s).
@pytest.mark.slow
def test_embedder_reports_latency_per_thread_count() -> None:
    figures = run_bench("embedder", "--repeat", "1")
    assert {run["threads"] for run in figures["runs"]} == {1, 2}
    for run in figures["runs"]:
        assert numbers(run["short_query"]) and numbers(run["forty_words"]) and run["batch_per_s"] > 0
    assert figures["cache_hit_us"] > 0


def test_agent_submit_reports_both_scenarios() -> None:
    figures = run_bench("agent_submit", "--submits", "1", "--sessions", "1", "--agent-delay", "0", "--gap", "0")
    for scenario in ("no workers", "agent busy"):
        assert figures[scenario]["n"] == 1 and numbers(figures[scenario]), scenario


@pytest.mark.server
def test_service_reports_both_endpoints(tmp_path: Path) -> None:
    figures = run_bench(
        "service",
        *("--learnings", "10", "--requests", "1", "--seconds", "1", "--concurrency", "1", "--db-dir", tmp_path),
        *("--import-mb", "0.02"),
    )
    [run] = figures["runs"]
    for endpoint in ("retrieve", "save_learning"):
        assert run[endpoint]["requests"] == 1 and run[endpoint]["errors"] == 0, endpoint
        assert numbers(run[endpoint]), endpoint
    loaded = figures["import_under_load"]
    assert loaded["requests"] == 1 and loaded["errors"] == 0 and loaded["import_lines"] > 0
    assert {"idle_p95_ms", "p95_ms", "p95_ratio", "import_lines_done"} <= set(loaded)


def test_dedupe_reports_the_three_rates_and_the_people_set(tmp_path: Path) -> None:
    pairs = tmp_path / "pairs.jsonl"
    corpus = ROOT / "bench" / "data" / "dedupe" / "tuning.jsonl"
    pairs.write_text("\n".join(corpus.read_text("utf-8").splitlines()[:12]) + "\n", "utf-8")
    figures = run_bench("dedupe", "--data", pairs, "--people", "30", "--embedder", "local:minilm-q8")
    profile = figures["profiles"]["local:minilm-q8"]
    corpus_figures = profile["corpora"]["pairs"]
    assert {"kept_apart", "stale_gone", "one_live", "confusion", "linked_for_review"} <= set(corpus_figures)
    assert profile["people"]["saves"] == 30 and "not_created_fraction" in profile["people"]


def test_locomo_recall_through_save_reports_what_happened_to_the_turns(tiny_locomo: tuple[Path, int, int]) -> None:
    path, turns, _ = tiny_locomo
    figures = run_bench("locomo_recall", "--data", path, "--path", "save")
    assert (
        figures["path"] == "save"
        and sum(figures["saves"][k] for k in ("created", "merged", "skipped", "new_version", "refused")) == turns
    )
    assert {"merged_or_skipped_fraction", "linked_fraction"} <= set(figures)


def test_relevance_reports_false_inclusion_and_recall(tmp_path: Path, tiny_locomo: tuple[Path, int, int]) -> None:
    data, _, _ = tiny_locomo
    row = {
        "user": "u1",
        "learnings": ["Dana keeps the spare keys in the blue drawer", "The team standup is at 9:30"],
        "unanswerable": ["What is the capital of Mongolia?"],
        "answerable": [{"query": "Where are the spare keys?", "answers": [0]}],
    }
    no_answer = tmp_path / "no_answer.jsonl"
    no_answer.write_text(json.dumps(row) + "\n", "utf-8")
    figures = run_bench("relevance", "--data", no_answer, "--locomo", data, "--embedder", EMBEDDER)
    assert figures["no_answer"]["no_answer"]["unanswerable"] == 1
    assert figures["no_answer"]["no_answer"]["answerable"] == 1
    assert 0.0 <= figures["locomo"]["cross_user_false_inclusion"] <= 1.0
    assert 0.0 <= figures["locomo"]["recall@10"] <= 1.0


def test_feedback_reports_each_label_for_both_arms(tmp_path: Path) -> None:
    rows = [
        {"previous_user": "How do I fix a stuck sparge?", "assistant": "Stir the grain bed and recirculate.",
         "follow_up": "Thanks, that worked!", "label": "positive"},
        {"previous_user": "What efficiency should I plan for?", "assistant": "Plan for 72%.",
         "follow_up": "I prefer using Irish moss rather than whirlfloc.", "label": "new_statement"},
    ]  # fmt: skip
    data = tmp_path / "follow_ups.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows), "utf-8")
    figures = run_bench("feedback", "--data", data)
    assert set(figures) == {"follow_ups [model]", "follow_ups [rules]"}
    model = figures["follow_ups [model]"]
    assert model["positive"]["n"] == 1 and model["benign follow-ups"] == 2
    assert model["benign that deprecate"] == 0


def test_holdback_reports_each_scenario_with_its_intervals() -> None:
    figures = run_bench("holdback", "--users", "6", "--sessions", "2", "--seeds", "1", "--resamples", "100")
    assert set(figures["scenarios"]) == {"memory helps", "A/A", "memory cannot help"}
    for scenario in figures["scenarios"].values():
        [run] = scenario["runs"]
        assert run["turns"] > 0 and set(run["outcomes"]) >= {"feedback", "correction", "turns_to_resolution"}
        assert scenario["summary"]["runs"] == 1
