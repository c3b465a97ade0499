#!/usr/bin/env python3
"""Dump, for every Unicode code point, what the reference HF tokenizers BERT
pipeline does with it, for TestTokenizerEveryCodePoint:

    /tmp/stenv/bin/python dump_codepoints.py MODEL_DIR/tokenizer.json > /tmp/cp_ref.tsv
    HIGMEM_TOKENIZER_CPREF=/tmp/cp_ref.tsv go test -run EveryCodePoint ./embed/minilm/

Columns (hex code points separated by spaces): the code point; the
normalizer's output for it alone; the pre-tokenizer's pieces for "a"+c+"b"
joined by "|". The output (~20 MB) is not committed.
"""

import sys

from tokenizers import Tokenizer

tok = Tokenizer.from_file(sys.argv[1])
norm, pre = tok.normalizer, tok.pre_tokenizer
out = sys.stdout
for c in range(0x110000):
    if 0xD800 <= c <= 0xDFFF:
        continue
    s = chr(c)
    n = norm.normalize_str(s)
    pieces = [p[0] for p in pre.pre_tokenize_str("a" + s + "b")]
    out.write("%X\t%s\t%s\n" % (
        c,
        " ".join("%X" % ord(x) for x in n),
        "|".join(" ".join("%X" % ord(x) for x in p) for p in pieces),
    ))
