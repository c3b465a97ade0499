#!/usr/bin/env python3
"""Generate golden data for the pure-Go MiniLM embedder from the reference
implementation (sentence-transformers + HF fast tokenizer).

Run once, from this directory, after `higmem models fetch --model all-MiniLM-L6-v2`
(or minilm.Fetch) has laid the model files out:

    python3 -m venv /tmp/stenv && /tmp/stenv/bin/pip install sentence-transformers
    /tmp/stenv/bin/python gen_golden.py [MODEL_DIR]

MODEL_DIR defaults to $HIGMEM_MODELS_DIR/all-MiniLM-L6-v2, else
~/.cache/higmem/models/all-MiniLM-L6-v2. The directory holds the files that
minilm.Fetch extracts (config.json, vocab.txt, model.safetensors,
tokenizer.json, modules.json, sentence_bert_config.json, 1_Pooling/...), so
SentenceTransformer(dir) loads exactly the weights the Go code reads.

Outputs (committed):
    golden_vectors.json  sentences, token ids and 384-d embeddings
    golden_tokens.json   token ids only, for a larger set of strings
                         (including seeded random unicode strings)
"""

import json
import os
import random
import sys

import numpy as np
import sentence_transformers
import tokenizers
import torch
import transformers
from sentence_transformers import SentenceTransformer

LONG = (
    "Last summer Caroline and Melanie drove along the coast for three weeks, "
    "stopping at small fishing towns, camping near the beach, painting sunsets "
    "and talking late into the night about adoption, art classes, the kids' "
    "school projects and the support group that changed Caroline's life. "
)

SENTENCES = [
    "Hey Mel! Good to see you! How have you been?",
    "I went to a LGBTQ support group yesterday and it was so powerful.",
    "Wow, that's cool, Caroline! What happened that was so awesome? Did you hear any inspiring stories?",
    "The transgender stories were so inspiring! I was so happy and thankful for all the support.",
    "[Image: a photo of a dog walking past a wall with a painting of a woman] Wow, love that painting!",
    "[Image: a photo of a dog] look!",
    "Melanie: I'm swamped with the kids & work. What's up with you? Anything new since 7 May 2023?",
    "We're thinking about adopting — my therapist (Dr. O'Neil) said it'd be a great next step, e-mail her at dr.oneil@example.com.",
    LONG * 6,
    "Café Müller, naïve résumé: Zoë's fiancée moved to São Paulo, then Kraków and Ångström Straße.",
    "我今天去了北京的博物馆。東京タワーに行きました。안녕하세요 반갑습니다",
    "I love this 🐶🎉 so much!!! 👍🏽 ❤️",
    " ",
    "",
    "tab\there\nnewline\r\x00null\u200bzero-width\ufeffbom\u00a0nbsp\u3000ideographic",
    "a" * 150 + " ok",
    "Call me at +1 (555) 010-9999, ok? $20.50 & 100% sure... #tbt @mel ~/path_name",
    "Ελληνικά και русский текст, مرحبا بالعالم, नमस्ते दुनिया, สวัสดีครับ",
    "ThE QuIcK BrOwN FoX jumps over supercalifragilisticexpialidocious antidisestablishmentarianism",
    "[CLS] [SEP] [MASK] [UNK] [PAD] [mask]x[SEP]y",
    "e\u0301 vs é, ﬁ ligature, ＡＢＣ１２３ full-width, ½ and ²",
    "What did Caroline research? She researched adoption agencies in early June 2023.",
]

EXTRA_TOKENS = [
    "U.S.A. don't won't o'clock",
    "\u2028line\u2029para\u0085nel\x7fdel\x1fus",
    "\ufffdreplacement \U0001F600grin \U000E0001tag",
    "𠀀𪜀 extension B and C chars, 〇 ideographic zero",
    "ǅ ǈ İstanbul ΣΊΣΥΦΟΣ ß ẞ",
    "   leading and trailing   ",
    "x" * 100,
    "x" * 101,
    "##not a suffix ## ###",
    "re-enter the co-op's ‘quoted’ “words” «here» ¡hola! ¿qué?",
    "Ⅻ ⑩ ㈱ ℃ ™ © ®",
    "\u0300\u0301 leading combining marks",
    "السَّلَامُ عَلَيْكُمْ",
    "ÅÄÖ åäö ÆØ æø Œ œ Ł ł Đ đ",
]


def random_strings(n, seed=4):
    rng = random.Random(seed)
    blocks = [
        (0x20, 0x7E),
        (0x80, 0x24F),
        (0x300, 0x36F),
        (0x370, 0x52F),
        (0x590, 0x6FF),
        (0x900, 0x97F),
        (0xE00, 0xE7F),
        (0x1100, 0x11FF),
        (0x1E00, 0x1FFF),
        (0x2000, 0x2BFF),
        (0x3000, 0x30FF),
        (0x4E00, 0x4E80),
        (0xAC00, 0xAD00),
        (0xFF00, 0xFFEF),
        (0x1F300, 0x1FAFF),
    ]
    out = []
    for _ in range(n):
        parts = []
        for _ in range(rng.randint(1, 30)):
            if rng.random() < 0.3:
                parts.append(" ")
            lo, hi = rng.choice(blocks)
            parts.append(chr(rng.randint(lo, hi)))
        out.append("".join(parts))
    return out


def default_dir():
    root = os.environ.get("HIGMEM_MODELS_DIR") or os.path.join(
        os.path.expanduser("~"), ".cache", "higmem", "models"
    )
    return os.path.join(root, "all-MiniLM-L6-v2")


def main():
    model_dir = sys.argv[1] if len(sys.argv) > 1 else default_dir()
    torch.set_num_threads(1)
    model = SentenceTransformer(model_dir, device="cpu")
    tok = model.tokenizer
    max_len = model.max_seq_length

    def ids(text):
        # Same call sentence-transformers makes (Transformer.tokenize strips).
        return tok(text.strip(), truncation=True, max_length=max_len)["input_ids"]

    vecs = model.encode(SENTENCES, batch_size=4, convert_to_numpy=True, normalize_embeddings=False)
    norms = np.linalg.norm(vecs, axis=1)
    versions = {
        "sentence_transformers": sentence_transformers.__version__,
        "transformers": transformers.__version__,
        "tokenizers": tokenizers.__version__,
        "torch": torch.__version__,
        "tokenizer_class": type(tok).__name__,
        "max_seq_length": max_len,
    }
    golden = {
        "versions": versions,
        "cases": [
            {
                "text": s,
                "ids": ids(s),
                "norm": float(n),
                "vector": [float("%.7g" % x) for x in v],
            }
            for s, v, n in zip(SENTENCES, vecs, norms)
        ],
    }
    with open("golden_vectors.json", "w", encoding="utf-8") as f:
        json.dump(golden, f, ensure_ascii=False, indent=1)
        f.write("\n")

    texts = SENTENCES + EXTRA_TOKENS + random_strings(300)
    tokens = {
        "versions": versions,
        "cases": [{"text": t, "ids": ids(t)} for t in texts],
    }
    with open("golden_tokens.json", "w", encoding="utf-8") as f:
        json.dump(tokens, f, ensure_ascii=False, indent=0)
        f.write("\n")
    print("wrote %d vectors, %d token cases; norms %.4f..%.4f" % (len(SENTENCES), len(texts), norms.min(), norms.max()))


if __name__ == "__main__":
    main()
