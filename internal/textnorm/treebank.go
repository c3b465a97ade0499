package textnorm

import "unicode"

// WordTokenize splits one sentence into tokens the way NLTK 3.9.1's
// nltk.word_tokenize does for a single sentence (its NLTKWordTokenizer, the
// improved Penn Treebank tokenizer): the final period and commas are split
// off (but not the comma in "3,000"), contractions are split ("don't" gives
// "do", "n't"; "she's" gives "she", "'s"; "cannot" gives "can", "not"),
// double quotes become the tokens of two backquotes (opening) and two
// single quotes (closing), and brackets, ? ! ; @ # $ % & * and ".."
// runs are separate tokens. Case is kept: lower-case the input first when
// you need BLEU as A-Mem computes it.
//
// Difference from nltk.word_tokenize: NLTK first splits the text into
// sentences with the Punkt model and tokenizes each one, so a period that
// ends an inner sentence ("yes. she went") is split off there; WordTokenize
// treats the whole input as one sentence and only splits the final period.
// Two rules that changed in later NLTK releases are kept in their 3.9.1 form:
// the dashes U+2012 to U+2015 are not split off (3.9.4 splits them), and a
// leading single quote is split only before a one-character word such as 'x
// (3.10.4 splits it before any word).
func WordTokenize(s string) []string {
	t := []rune(s)

	// Starting quotes.
	t = tbPad(t, func(r rune) bool { return r == '«' || r == '“' || r == '‘' || r == '„' }, true)
	if len(t) > 0 && t[0] == '"' {
		t = append([]rune("``"), t[1:]...)
	}
	t = tbReplaceLiteral(t, "``", " `` ")
	t = tbOpeningDoubleQuote(t)
	t = tbLeadingSingleQuote(t)

	// Punctuation.
	t = tbFinalPeriod(t, true)
	t = tbColonComma(t)
	t = tbFinalColonComma(t)
	t = tbPeriodRuns(t)
	t = tbPad(t, func(r rune) bool {
		return r == ';' || r == '@' || r == '#' || r == '$' || r == '%' || r == '&'
	}, false)
	t = tbFinalPeriod(t, false)
	t = tbPad(t, func(r rune) bool { return r == '?' || r == '!' }, false)
	t = tbQuoteBeforeSpace(t)
	t = tbPad(t, func(r rune) bool { return r == '*' }, false)

	// Brackets and double dashes.
	t = tbPad(t, func(r rune) bool {
		switch r {
		case '[', ']', '(', ')', '{', '}', '<', '>':
			return true
		}
		return false
	}, false)
	t = tbReplaceLiteral(t, "--", " -- ")

	t = append(append([]rune{' '}, t...), ' ')

	// Ending quotes.
	t = tbPad(t, func(r rune) bool { return r == '»' || r == '”' || r == '’' }, false)
	t = tbReplaceLiteral(t, "''", " '' ")
	t = tbReplaceLiteral(t, `"`, " '' ")
	t = tbCollapseSpace(t)
	t = tbClitics(t)

	// MacIntyre contractions.
	for _, c := range tbContractions2 {
		t = tbSplitContraction(t, c)
	}
	t = tbSplitTis(t, "is")
	t = tbSplitTis(t, "was")

	return tbFields(t)
}

// pyIsSpace matches Python's str.isspace and the re module's \s.
func pyIsSpace(r rune) bool {
	return unicode.IsSpace(r) || (r >= 0x1c && r <= 0x1f)
}

// pyIsWord matches the re module's \w for str patterns.
func pyIsWord(r rune) bool {
	return r == '_' || unicode.IsLetter(r) || unicode.IsNumber(r)
}

// tbPad surrounds every rune matching pred with spaces; with runs set, a
// maximal run of backquotes is padded as one unit (the `+ alternative).
func tbPad(t []rune, pred func(rune) bool, runs bool) []rune {
	out := make([]rune, 0, len(t)+8)
	for i := 0; i < len(t); i++ {
		r := t[i]
		switch {
		case runs && r == '`':
			j := i
			for j < len(t) && t[j] == '`' {
				j++
			}
			out = append(out, ' ')
			out = append(out, t[i:j]...)
			out = append(out, ' ')
			i = j - 1
		case pred(r):
			out = append(out, ' ', r, ' ')
		default:
			out = append(out, r)
		}
	}
	return out
}

func tbHasPrefix(t []rune, i int, lit string) bool {
	for _, c := range lit {
		if i >= len(t) || t[i] != c {
			return false
		}
		i++
	}
	return true
}

// tbReplaceLiteral replaces non-overlapping occurrences of lit, left to right.
func tbReplaceLiteral(t []rune, lit, repl string) []rune {
	n := len([]rune(lit))
	out := make([]rune, 0, len(t)+8)
	for i := 0; i < len(t); {
		if tbHasPrefix(t, i, lit) {
			out = append(out, []rune(repl)...)
			i += n
			continue
		}
		out = append(out, t[i])
		i++
	}
	return out
}

// tbOpeningDoubleQuote: a double quote, or two single quotes, after one of
// ' ([{<' becomes two backquotes.
func tbOpeningDoubleQuote(t []rune) []rune {
	out := make([]rune, 0, len(t)+8)
	for i := 0; i < len(t); {
		r := t[i]
		if r == ' ' || r == '(' || r == '[' || r == '{' || r == '<' {
			if tbHasPrefix(t, i+1, `"`) {
				out = append(out, r, ' ', '`', '`', ' ')
				i += 2
				continue
			}
			if tbHasPrefix(t, i+1, "''") {
				out = append(out, r, ' ', '`', '`', ' ')
				i += 3
				continue
			}
		}
		out = append(out, r)
		i++
	}
	return out
}

// tbLeadingSingleQuote: (?i)(\')(?!re|ve|ll|m|t|s|d|n)(\w)\b -> \1 \2
func tbLeadingSingleQuote(t []rune) []rune {
	out := make([]rune, 0, len(t)+4)
	for i := 0; i < len(t); {
		if t[i] == '\'' && i+1 < len(t) && pyIsWord(t[i+1]) && (i+2 == len(t) || !pyIsWord(t[i+2])) {
			switch unicode.ToLower(t[i+1]) {
			case 'm', 't', 's', 'd', 'n':
			default:
				out = append(out, '\'', ' ', t[i+1])
				i += 2
				continue
			}
		}
		out = append(out, t[i])
		i++
	}
	return out
}

// tbFinalPeriod splits off the sentence-final period. With wide set it is
// ([^\.])(\.)([\]\)}>"\'»”’ ]*)\s*$ -> \1 \2 \3 ; otherwise it is
// ([^\.])(\.)([\]\)}>"\']*)\s*$ -> \1 \2\3 .
func tbFinalPeriod(t []rune, wide bool) []rune {
	closer := func(r rune) bool {
		switch r {
		case ']', ')', '}', '>', '"', '\'':
			return true
		case '»', '”', '’', ' ':
			return wide
		}
		return false
	}
	dot := -1
	for i := len(t) - 1; i >= 0; i-- {
		if t[i] == '.' {
			dot = i
			break
		}
	}
	if dot < 1 || t[dot-1] == '.' {
		return t
	}
	j := dot + 1
	for j < len(t) && closer(t[j]) {
		j++
	}
	for k := j; k < len(t); k++ {
		if !pyIsSpace(t[k]) {
			return t
		}
	}
	out := make([]rune, 0, len(t)+4)
	out = append(out, t[:dot]...)
	if wide {
		out = append(out, ' ', '.', ' ')
	} else {
		out = append(out, ' ', '.')
	}
	out = append(out, t[dot+1:j]...)
	return append(out, ' ')
}

// tbColonComma: ([:,])([^\d]) -> " \1 \2"
func tbColonComma(t []rune) []rune {
	out := make([]rune, 0, len(t)+8)
	for i := 0; i < len(t); {
		if (t[i] == ':' || t[i] == ',') && i+1 < len(t) && !unicode.IsDigit(t[i+1]) {
			out = append(out, ' ', t[i], ' ', t[i+1])
			i += 2
			continue
		}
		out = append(out, t[i])
		i++
	}
	return out
}

// tbFinalColonComma: ([:,])$ -> " \1 " ($ also matches before a final \n).
func tbFinalColonComma(t []rune) []rune {
	n := len(t)
	at := -1
	if n >= 1 && (t[n-1] == ':' || t[n-1] == ',') {
		at = n - 1
	} else if n >= 2 && t[n-1] == '\n' && (t[n-2] == ':' || t[n-2] == ',') {
		at = n - 2
	}
	if at < 0 {
		return t
	}
	out := make([]rune, 0, n+2)
	out = append(out, t[:at]...)
	out = append(out, ' ', t[at], ' ')
	return append(out, t[at+1:]...)
}

// tbPeriodRuns: \.{2,} -> " \g<0> "
func tbPeriodRuns(t []rune) []rune {
	out := make([]rune, 0, len(t)+4)
	for i := 0; i < len(t); {
		if t[i] == '.' && i+1 < len(t) && t[i+1] == '.' {
			j := i
			for j < len(t) && t[j] == '.' {
				j++
			}
			out = append(out, ' ')
			out = append(out, t[i:j]...)
			out = append(out, ' ')
			i = j
			continue
		}
		out = append(out, t[i])
		i++
	}
	return out
}

// tbQuoteBeforeSpace: ([^'])' -> "\1 ' "
func tbQuoteBeforeSpace(t []rune) []rune {
	out := make([]rune, 0, len(t)+4)
	for i := 0; i < len(t); {
		if t[i] != '\'' && i+2 < len(t) && t[i+1] == '\'' && t[i+2] == ' ' {
			out = append(out, t[i], ' ', '\'', ' ')
			i += 3
			continue
		}
		out = append(out, t[i])
		i++
	}
	return out
}

// tbCollapseSpace: \s+ -> " "
func tbCollapseSpace(t []rune) []rune {
	out := make([]rune, 0, len(t))
	for i := 0; i < len(t); i++ {
		if pyIsSpace(t[i]) {
			out = append(out, ' ')
			for i+1 < len(t) && pyIsSpace(t[i+1]) {
				i++
			}
			continue
		}
		out = append(out, t[i])
	}
	return out
}

// tbClitics applies the two clitic rules in order:
// ([^' ])('[sS]|'[mM]|'[dD]|') -> "\1 \2 " and
// ([^' ])('ll|'LL|'re|'RE|'ve|'VE|n't|N'T) -> "\1 \2 ".
func tbClitics(t []rune) []rune {
	out := make([]rune, 0, len(t)+8)
	for i := 0; i < len(t); {
		if t[i] != '\'' && t[i] != ' ' && i+2 < len(t) && t[i+1] == '\'' {
			c := t[i+2]
			if (c == 's' || c == 'S' || c == 'm' || c == 'M' || c == 'd' || c == 'D') && i+3 < len(t) && t[i+3] == ' ' {
				out = append(out, t[i], ' ', '\'', c, ' ')
				i += 4
				continue
			}
			if c == ' ' {
				out = append(out, t[i], ' ', '\'', ' ')
				i += 3
				continue
			}
		}
		out = append(out, t[i])
		i++
	}
	t = out
	out = make([]rune, 0, len(t)+8)
	alts := [...]string{"'ll", "'LL", "'re", "'RE", "'ve", "'VE", "n't", "N'T"}
outer:
	for i := 0; i < len(t); {
		if t[i] != '\'' && t[i] != ' ' {
			for _, a := range alts {
				if tbHasPrefix(t, i+1, a) && tbHasPrefix(t, i+4, " ") {
					out = append(out, t[i], ' ')
					out = append(out, t[i+1:i+4]...)
					out = append(out, ' ')
					i += 5
					continue outer
				}
			}
		}
		out = append(out, t[i])
		i++
	}
	return out
}

// tbContraction is one MacIntyre pattern (?i)\b(a)(b)\b, or (?i)\b(a)(b)(?=\s)
// when spaceAfter is set.
type tbContraction struct {
	a, b       string
	spaceAfter bool
}

var tbContractions2 = [...]tbContraction{
	{"can", "not", false},
	{"d", "'ye", false},
	{"gim", "me", false},
	{"gon", "na", false},
	{"got", "ta", false},
	{"lem", "me", false},
	{"more", "'n", false},
	{"wan", "na", true},
}

// tbHasPrefixFold reports whether t[i:] starts with the ASCII string lit,
// ignoring ASCII case.
func tbHasPrefixFold(t []rune, i int, lit string) bool {
	if i+len(lit) > len(t) {
		return false
	}
	for k := 0; k < len(lit); k++ {
		r, c := t[i+k], rune(lit[k])
		if r != c && !('a' <= c && c <= 'z' && r == c-'a'+'A') {
			return false
		}
	}
	return true
}

func tbSplitContraction(t []rune, c tbContraction) []rune {
	la, lb := len(c.a), len(c.b)
	out := make([]rune, 0, len(t)+4)
	for i := 0; i < len(t); {
		if (i == 0 || !pyIsWord(t[i-1])) && tbHasPrefixFold(t, i, c.a) && tbHasPrefixFold(t, i+la, c.b) {
			end := i + la + lb
			ok := false
			if c.spaceAfter {
				ok = end < len(t) && pyIsSpace(t[end])
			} else {
				ok = end == len(t) || !pyIsWord(t[end])
			}
			if ok {
				out = append(out, ' ')
				out = append(out, t[i:i+la]...)
				out = append(out, ' ')
				out = append(out, t[i+la:end]...)
				out = append(out, ' ')
				i = end
				continue
			}
		}
		out = append(out, t[i])
		i++
	}
	return out
}

// tbSplitTis: (?i) ('t)(is|was)\b -> " \1 \2 "
func tbSplitTis(t []rune, word string) []rune {
	out := make([]rune, 0, len(t)+4)
	for i := 0; i < len(t); {
		if t[i] == ' ' && tbHasPrefixFold(t, i+1, "'t") && tbHasPrefixFold(t, i+3, word) {
			end := i + 3 + len(word)
			if end == len(t) || !pyIsWord(t[end]) {
				out = append(out, ' ')
				out = append(out, t[i+1:i+3]...)
				out = append(out, ' ')
				out = append(out, t[i+3:end]...)
				out = append(out, ' ')
				i = end
				continue
			}
		}
		out = append(out, t[i])
		i++
	}
	return out
}

// tbFields splits on Python whitespace, like str.split().
func tbFields(t []rune) []string {
	var out []string
	start := -1
	for i, r := range t {
		if pyIsSpace(r) {
			if start >= 0 {
				out = append(out, string(t[start:i]))
				start = -1
			}
		} else if start < 0 {
			start = i
		}
	}
	if start >= 0 {
		out = append(out, string(t[start:]))
	}
	return out
}
