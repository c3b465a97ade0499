#!/usr/bin/env python3
"""Regenerate metrics_golden.jsonl for metrics_test.go.

Run once by hand (the Go tests never call Python):

    python3 -m venv /tmp/nltk391 && /tmp/nltk391/bin/pip install nltk==3.9.1
    /tmp/nltk391/bin/python eval/locomo/testdata/gen_metrics.py

The scorers below are written from the descriptions of the official LoCoMo
evaluation (task_eval/evaluation.py: normalize_answer, f1_score, f1 and the
category rules) and of A-Mem's utils.py (simple_tokenize set F1, BLEU-1 via
nltk sentence_bleu). They use NLTK's PorterStemmer, and NLTKWordTokenizer in
place of word_tokenize (the same for single sentences; the Punkt model that
word_tokenize needs is not a pip package). The pairs are made up, not taken
from LoCoMo.
"""

import json
import os
import string
from collections import Counter

import regex  # installed with nltk
from nltk.stem import PorterStemmer
from nltk.tokenize.destructive import NLTKWordTokenizer
from nltk.translate.bleu_score import SmoothingFunction, sentence_bleu

HERE = os.path.dirname(os.path.abspath(__file__))
ps = PorterStemmer()
tok = NLTKWordTokenizer()


def normalize_answer(s):
    s = s.replace(",", "")
    s = s.lower()
    exclude = set(string.punctuation)
    s = "".join(ch for ch in s if ch not in exclude)
    s = regex.sub(r"\b(a|an|the|and)\b", " ", s)
    return " ".join(s.split())


def f1_score(prediction, ground_truth):
    p = [ps.stem(w) for w in normalize_answer(prediction).split()]
    g = [ps.stem(w) for w in normalize_answer(ground_truth).split()]
    common = Counter(p) & Counter(g)
    same = sum(common.values())
    if same == 0:
        return 0.0
    precision = same / len(p)
    recall = same / len(g)
    return 2 * precision * recall / (precision + recall)


def f1_multi(prediction, ground_truth):
    preds = [p.strip() for p in prediction.split(",")]
    golds = [g.strip() for g in ground_truth.split(",")]
    return sum(max(f1_score(p, g) for p in preds) for g in golds) / len(golds)


def official(pred, gold, cat):
    if cat == 5:
        low = pred.lower()
        return 1.0 if ("no information available" in low or "not mentioned" in low) else 0.0
    if cat == 1:
        return f1_multi(pred, gold)
    if cat == 3:
        gold = gold.split(";")[0].strip()
    return f1_score(pred, gold)


def simple_tokenize(text):
    text = str(text).lower()
    for ch in ".,!?":
        text = text.replace(ch, " ")
    return text.split()


def amem_f1(pred, gold):
    if not pred or not gold:
        return 0.0
    p, g = set(simple_tokenize(pred)), set(simple_tokenize(gold))
    if not p or not g:
        return 0.0
    common = p & g
    if not common:
        return 0.0
    precision = len(common) / len(p)
    recall = len(common) / len(g)
    return 2 * precision * recall / (precision + recall)


def bleu1(pred, gold):
    if not pred or not gold:
        return 0.0
    p = tok.tokenize(pred.lower())
    g = [tok.tokenize(gold.lower())]
    try:
        return float(sentence_bleu(g, p, weights=(1, 0, 0, 0), smoothing_function=SmoothingFunction().method1))
    except Exception:
        return 0.0


def exact(pred, gold):
    if not pred or not gold:
        return 0.0
    return 1.0 if pred.strip().lower() == gold.strip().lower() else 0.0


CASES = [
    # Rows of reference-amem-locomo.md section 8.
    (4, "She went to the LGBTQ support group.", "LGBTQ support group"),
    (4, "running marathons", "ran a marathon"),
    (1, "weight training, yoga", "Weight training, Circuit training, Kickboxing, yoga"),
    (1, "yoga and kickboxing", "Weight training, Circuit training, Kickboxing, yoga"),
    (2, "7 May 2023", "7 May 2023"),
    (2, "May 7, 2023", "7 May 2023"),
    (3, "Likely no", "LIkely no; though she likes reading, she wants to be a counselor"),
    (5, "Not mentioned in the conversation", "Ferrari"),
    (5, "Ferrari", "Ferrari"),
    # More made-up pairs.
    (4, "", "something"),
    (4, "something", ""),
    (4, "The the a an and", "the"),
    (4, "A dog, a cat and a bird!", "dog cat bird"),
    (4, "Caroline's friends", "caroline friends"),
    (4, "She's been painting since 2019.", "since 2019"),
    (4, "Pottery and painting", "painting, pottery, camping"),
    (1, "painting, pottery", "painting, pottery, camping"),
    (1, "painting pottery camping", "painting, pottery, camping"),
    (1, "", "a, b"),
    (1, "x,,y", "x, y,"),
    (2, "The Friday before 24 June, 2022", "the friday before June 24, 2022"),
    (2, "In 2022", "2022"),
    (2, "last week of May 2023", "The week before 9 June 2023"),
    (3, "Yes; she likes it", "Yes; because she said so"),
    (3, "Probably a counselor", "Likely counseling or mental health"),
    (3, "no", ";"),
    (5, "There is NO INFORMATION AVAILABLE about that.", "Ferrari"),
    (5, "It was not mentioned.", ""),
    (5, "Not stated", "x"),
    (4, "U.S.A.", "usa"),
    (4, "don't know", "do not know"),
    (4, "generously happily dying lying skies", "generous happy die lie sky"),
    (4, "\u201cBecoming\u201d by Michelle Obama", "Becoming - Michelle Obama"),
    (4, "Adoption agencies", "adopting agency"),
    (4, "He's a volunteer \u2014 at the shelter", "volunteer shelter"),
    (4, "sunset, sunrise, sunset", "sunset sunset"),
    (4, "a b c d e f g h i j", "b"),
    (4, "b", "a b c d e f g h i j"),
    (4, "It's in the U.K., isn't it?", "the uk"),
    (4, "Paris!!!", "paris"),
    (4, "  Paris ", "paris"),
    (4, "mom's (mother's) house", "mothers house"),
    (4, "$3.88 at 10:30 am", "10:30 am"),
    (4, "I can't say; maybe 3,000", "3,000"),
    (0, "unknown category scores plainly", "plainly"),
    (6, "Not mentioned", "Not mentioned"),
]


def main():
    path = os.path.join(HERE, "metrics_golden.jsonl")
    with open(path, "w", encoding="utf-8") as f:
        for cat, pred, gold in CASES:
            row = {
                "category": cat,
                "pred": pred,
                "gold": gold,
                "official_f1": official(pred, gold, cat),
                "amem_f1": amem_f1(pred, gold),
                "bleu1": bleu1(pred, gold),
                "exact": exact(pred, gold),
            }
            f.write(json.dumps(row, ensure_ascii=False) + "\n")
    print(len(CASES), "rows written to", path)


if __name__ == "__main__":
    main()
