#!/usr/bin/env python3
"""The retrieval fixture's expected values, computed by the tools people
check against: LlamaIndex's RetrieverEvaluator (hit rate, MRR, precision,
recall, average precision, nDCG, and their "granular" variants), RAGAS's
ID-based context precision and recall and its non-LLM context recall (for
passages without IDs), and scikit-learn's ndcg_score / dcg_score for graded
nDCG at a cutoff (neither RAGAS nor LlamaIndex grades relevance).

Reads tests/retrieval_reference/cases.yaml and writes
tests/retrieval_reference/expected.json beside it;
tests/retrieval_reference.rs compares ragaliq's values with these to 1e-9.

The tools run in a virtual environment outside the repository, made on
the first run with the exact versions in
scripts/retrieval-reference.requirements.txt (Python 3.11):

    python3.11 scripts/retrieval-reference.py                  # venv in ~/.cache/ragaliq/retrieval-reference
    python3.11 scripts/retrieval-reference.py --venv /work/venv-retrieval
    python3.11 scripts/retrieval-reference.py --random 24      # (re)write the seeded random cases, then compute

Nothing here is a hand-written formula: every value is what the tool's own
function returns for the case.
"""

import argparse
import json
import os
import random
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIXTURE = ROOT / "tests" / "retrieval_reference"
REQUIREMENTS = ROOT / "scripts" / "retrieval-reference.requirements.txt"
RANDOM_MARK = "# --- random cases: written by scripts/retrieval-reference.py --random ---"
CUTOFFS = (1, 3, 5, 10)


def ensure_venv(path: Path) -> None:
    """Re-runs this script inside the venv at `path`, made if missing."""
    if Path(sys.prefix).resolve() == path.resolve():
        return
    python = path / "bin" / "python"
    if not python.exists():
        print(f"making a venv in {path} with {REQUIREMENTS.name}", file=sys.stderr)
        venv.EnvBuilder(with_pip=True).create(path)
        subprocess.run(
            [str(python), "-m", "pip", "install", "--quiet", "-r", str(REQUIREMENTS)],
            check=True,
        )
    os.execv(str(python), [str(python), __file__, *sys.argv[1:], "--in-venv"])


def write_random_cases(n: int) -> None:
    """Appends `n` seeded random cases to cases.yaml (replacing earlier ones):
    lists of 1 to 10 IDs over an alphabet of 12, no repeats, 1 to 4 relevant
    IDs, a third of them graded 1 to 3."""
    rng = random.Random(43)
    alphabet = [f"d{i}" for i in range(12)]
    text = (FIXTURE / "cases.yaml").read_text()
    text = text.split(RANDOM_MARK)[0].rstrip() + "\n\n" + RANDOM_MARK + "\n"
    for i in range(n):
        retrieved = rng.sample(alphabet, rng.randint(1, 10))
        relevant = rng.sample(alphabet, rng.randint(1, 4))
        if i % 3 == 0:
            labels = "{" + ", ".join(f"{r}: {rng.randint(1, 3)}" for r in relevant) + "}"
        else:
            labels = "[" + ", ".join(relevant) + "]"
        text += (
            f"- id: random-{i + 1:02}\n"
            f"  query: Seeded random case {i + 1}.\n"
            f"  retrieved_ids: [{', '.join(retrieved)}]\n"
            f"  relevant_ids: {labels}\n"
        )
    (FIXTURE / "cases.yaml").write_text(text)


def relevant_grades(case) -> dict:
    labels = case.get("relevant_ids")
    if isinstance(labels, dict):
        return {str(k): float(v) for k, v in labels.items()}
    return {str(k): 1.0 for k in labels}


def llamaindex_values(query: str, retrieved: list, expected: list) -> dict:
    """RetrieverEvaluator over a retriever that returns `retrieved`, in order.

    LlamaIndex's retrievers drop a node they already returned (keeping its
    first place), so a list with repeats reaches the metrics shorter, the
    places after a repeat moved up; for such a list the metrics' own
    `compute` on the list as given is recorded too, as `llamaindex_raw.*`."""
    import asyncio

    from llama_index.core.base.base_retriever import BaseRetriever
    from llama_index.core.evaluation import RetrieverEvaluator
    from llama_index.core.evaluation.retrieval.metrics import (
        MRR,
        NDCG,
        AveragePrecision,
        HitRate,
        Precision,
        Recall,
    )
    from llama_index.core.schema import NodeWithScore, TextNode

    class Fixed(BaseRetriever):
        def _retrieve(self, query_bundle):
            return [
                NodeWithScore(node=TextNode(id_=doc, text=doc), score=1.0 / (rank + 1))
                for rank, doc in enumerate(retrieved)
            ]

    out = {}
    plain = RetrieverEvaluator(
        metrics=[HitRate(), MRR(), Precision(), Recall(), AveragePrecision(), NDCG()],
        retriever=Fixed(),
    )
    granular = RetrieverEvaluator(
        metrics=[
            HitRate(use_granular_hit_rate=True),
            MRR(use_granular_mrr=True),
            NDCG(mode="exponential"),
        ],
        retriever=Fixed(),
    )
    result = asyncio.run(plain.aevaluate(query, expected_ids=expected))
    deduplicated = list(dict.fromkeys(retrieved))
    assert result.retrieved_ids == deduplicated, (result.retrieved_ids, retrieved)
    for name, value in result.metric_vals_dict.items():
        out[f"llamaindex.{name}"] = value
    result = asyncio.run(granular.aevaluate(query, expected_ids=expected))
    names = {"hit_rate": "hit_rate_granular", "mrr": "mrr_granular", "ndcg": "ndcg_exponential"}
    for name, value in result.metric_vals_dict.items():
        out[f"llamaindex.{names[name]}"] = value
    if deduplicated != retrieved:
        for metric in (*plain.metrics, *granular.metrics):
            name = metric.metric_name
            if getattr(metric, "use_granular_hit_rate", False) or getattr(metric, "use_granular_mrr", False):
                name += "_granular"
            elif getattr(metric, "mode", "linear") == "exponential":
                name += "_exponential"
            value = metric.compute(query, expected_ids=expected, retrieved_ids=retrieved).score
            out[f"llamaindex_raw.{name}"] = value
    return out


def ragas_id_values(retrieved: list, reference: list) -> dict:
    import asyncio

    from ragas.dataset_schema import SingleTurnSample
    from ragas.metrics._context_precision import IDBasedContextPrecision
    from ragas.metrics._context_recall import IDBasedContextRecall

    sample = SingleTurnSample(retrieved_context_ids=retrieved, reference_context_ids=reference)
    return {
        "ragas.id_based_context_precision": asyncio.run(
            IDBasedContextPrecision().single_turn_ascore(sample)
        ),
        "ragas.id_based_context_recall": asyncio.run(
            IDBasedContextRecall().single_turn_ascore(sample)
        ),
    }


def ragas_text_values(retrieved: list, reference: list) -> dict:
    import asyncio

    from ragas.dataset_schema import SingleTurnSample
    from ragas.metrics._context_recall import NonLLMContextRecall

    sample = SingleTurnSample(retrieved_contexts=retrieved, reference_contexts=reference)
    return {
        "ragas.non_llm_context_recall": asyncio.run(
            NonLLMContextRecall().single_turn_ascore(sample)
        )
    }


def sklearn_values(retrieved: list, grades: dict) -> dict:
    """nDCG at each cutoff, and over the whole list, with the grades as gains
    (linear) and as 2^grade - 1 (exponential). scikit-learn scores items,
    not lists: the retrieved IDs are scored in rank order, then places that
    were not filled (up to the largest cutoff, grade 0), then the relevant
    IDs that were not retrieved, so that those count in the ideal list and
    never within a cutoff."""
    import numpy as np
    from sklearn.metrics import dcg_score, ndcg_score

    missing = [d for d in grades if d not in retrieved and grades[d] > 0]
    empty = [None] * max(0, max(CUTOFFS) - len(retrieved))
    items = retrieved + empty + missing
    scores = np.array([[float(len(items) - i) for i in range(len(items))]])
    out = {}
    for name, gain in (("ndcg", lambda g: g), ("ndcg_exp", lambda g: 2.0**g - 1.0)):
        truth = np.array([[gain(grades.get(d, 0.0)) if d else 0.0 for d in items]])
        for k in CUTOFFS:
            out[f"sklearn.{name}@{k}"] = float(ndcg_score(truth, scores, k=k))
        # No cutoff: the list's own DCG over the ideal DCG of every relevant ID.
        dcg = float(dcg_score(truth, scores, k=len(retrieved)))
        ideal = float(dcg_score(truth, truth, k=None))
        out[f"sklearn.{name}"] = dcg / ideal
    return out


def versions() -> dict:
    from importlib.metadata import version

    return {
        "python": sys.version.split()[0],
        **{p: version(p) for p in ("ragas", "llama-index-core", "scikit-learn", "rapidfuzz", "numpy")},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    default_venv = os.environ.get("RAGALIQ_REFERENCE_VENV") or str(
        Path.home() / ".cache" / "ragaliq" / "retrieval-reference"
    )
    parser.add_argument("--venv", default=default_venv, help="the virtual environment (made if missing)")
    parser.add_argument("--random", type=int, metavar="N", help="(re)write N seeded random cases first")
    parser.add_argument("--in-venv", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if not args.in_venv:
        if args.random is not None:
            write_random_cases(args.random)
        ensure_venv(Path(args.venv))

    import warnings

    import yaml

    warnings.filterwarnings("ignore")
    # Every scalar as written, as ragaliq reads IDs (`007` stays `007`).
    cases = yaml.load((FIXTURE / "cases.yaml").read_text(), Loader=yaml.BaseLoader)
    values = {}
    for case in cases:
        v = {}
        if "relevant_passages" in case:
            v.update(ragas_text_values(case["context"], case["relevant_passages"]))
        else:
            retrieved = [str(d) for d in case["retrieved_ids"]]
            grades = relevant_grades(case)
            expected = [d for d, g in grades.items() if g > 0]
            v.update(llamaindex_values(case["query"], retrieved, expected))
            v.update(ragas_id_values(retrieved, expected))
            # A repeat has no place in scikit-learn's one score per item.
            if len(set(retrieved)) == len(retrieved):
                v.update(sklearn_values(retrieved, grades))
        values[case["id"]] = v
    out = {
        "generated_by": "scripts/retrieval-reference.py",
        "versions": versions(),
        "cases": values,
    }
    path = FIXTURE / "expected.json"
    path.write_text(json.dumps(out, indent=2, sort_keys=False) + "\n")
    count = sum(len(v) for v in values.values())
    print(f"wrote {count} reference values for {len(values)} cases to {path.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
