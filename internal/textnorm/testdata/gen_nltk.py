#!/usr/bin/env python3
"""Regenerate the NLTK golden files used by textnorm's tests.

Run once by hand (the Go tests never call Python):

    python3 -m venv /tmp/nltk391 && /tmp/nltk391/bin/pip install nltk==3.9.1
    /tmp/nltk391/bin/python internal/textnorm/testdata/gen_nltk.py

It writes, next to this script:
  porter_stems.tsv    word<TAB>PorterStemmer().stem(word)   (NLTK_EXTENSIONS mode)
  word_tokenize.jsonl {"in": sentence, "out": NLTKWordTokenizer().tokenize(sentence)}

NLTKWordTokenizer is what nltk.word_tokenize applies to each sentence after
Punkt sentence splitting; the inputs here are single sentences, for which the
two agree, and the Punkt model is not needed (it is not a pip package).
NLTK 3.9.1 is pinned because the tokenizer's rules changed in 3.9.4 (dashes)
and 3.10.4 (leading single quotes); the Porter stemmer gives the same output
in 3.8.1, 3.9.1 and 3.10.4.
"""

import json
import os

import nltk
from nltk.stem import PorterStemmer
from nltk.tokenize.destructive import NLTKWordTokenizer

HERE = os.path.dirname(os.path.abspath(__file__))

# Words from Porter's paper and NLTK's docstrings, NLTK's irregular forms,
# each step's suffixes, y-handling, short words, and everyday words that show
# up in chat answers.
WORDS = """
caresses ponies ties caress cats feed agreed plastered bled motoring sing
conflated troubled sized hopping tanned falling hissing fizzed failing filing
happy sky skies dying lying tying news innings inning outings outing cannings
canning howe proceed exceed succeed proceeding exceeded succeeding
relational conditional rational valenci hesitanci digitizer conformabli
radicalli differentli vileli analogousli vietnamization predication operator
feudalism decisiveness hopefulness callousness formaliti sensitiviti
sensibiliti triplicate formative formalize electriciti electrical hopeful
goodness revival allowance inference airliner gyroscopic adjustable
defensible irritant replacement adjustment dependent adoption homologou
communism activate angulariti homologous effective bowdlerize probate rate
cease controll roll generously happily conditionally generalization
generalizations generous generously generosity enjoy enjoyment enjoying spy
fly try spied tried flies died lied tied dies lies cried cries ied
agreement agreeing agree feeds feeding bleed breed speed speeding
running runs ran marathon marathons kickboxing training trained weight
counselor counseling counselling reading reads likely likes liked
volunteering volunteered volunteer adopted adopting adoption children
child childhood painting paintings painted camping camped hiking hiked
pottery potteries museum museums beautiful beautifully beauty friendship
friendships transgender supportive support supported supporting
photography photographs photographer photo photos nature naturally
naturalist sunset sunsets instrument instruments playing played plays
guitar violin clarinet dancing danced dances competition competitions
conference conferences traveled travelled traveling travelling
mentioned mention mentions information informational available
availability conversation conversations conversational
a an as is be by my we us ox i y yy ay ey oy
yes yesterday yearly year years yoga yogurt
ability abilities agility national nationality nationally nationalism
relativity relative relatively relate related relating relation
relations hopelessness carelessness usefulness uselessness
electric electricity electrician electronic electronically
logic logical logically biology biological apology apologies apologize
analogy analogies technology technological astrology
fully skillfully fulli hopefulli beautifulli
allied rallied tallied sallied ally alley valley valleys
sensational operational international traditional traditionally
optional emotional emotionally professional professionally
dreaming dreamed dreamt doing does done going goes gone went
eaten eating eats ate seeing seen saw flying flew flown
meeting meetings meet met sweeping swept
abated abating abatement abatements abbey abbeys
hopped hoped hope hoping fussed fussing buzzed buzzing
filling filled fill tanned tanning planned planning
scheduled scheduling necessary necessarily necessity
possibility possibilities possible possibly
organization organizations organize organized organizer organizing
motivation motivations motivational motivate motivated motivating
determination determined determine determining
exciting excited excitement excites
DYING Dying Skies News Lying Generously HAPPILY Caroline's
""".split()

SENTENCES = [
    "She went to the LGBTQ support group.",
    "Weight training, Circuit training, Kickboxing, yoga",
    "May 7, 2023",
    "7 May 2023",
    "The Friday before 24 June, 2022",
    "Likely no; though she likes reading, she wants to be a counselor",
    "Not mentioned in the conversation",
    "I don't know, but she can't go and they won't either.",
    "She's been painting since 2019 and it's her favourite hobby.",
    "We're going camping; you'll love it, I'm sure.",
    "They've adopted two kids and they'd like more.",
    "Caroline's friends' party was on 3,000 feet up.",
    'He said, "I love it!" and left.',
    "\"Charlotte's Web\" is her favorite book.",
    "She read 'Becoming' by Michelle Obama.",
    "Did Melanie go to the museum (the one downtown)?",
    "Prices went up 12.5% to $3.88 at 10:30 am.",
    "email me @ john@example.com #tags & more",
    "Wait... what happened next?",
    "It was, like, amazing -- truly amazing.",
    "Cannot stop, gonna try, gotta go, wanna see, gimme that, lemme know.",
    "'Tis the season and 'twas fun.",
    "The kids (ages 3 and 5) loved it [really].",
    "Temperature was {cold} <very> cold.",
    "He shouted: run!",
    "Items: apples, pears: 2:30",
    "The end.)",
    "She said \"bye.\"",
    "U.S. citizens live in the U.S.",
    "Mr. Smith went to Washington.",
    "It cost 5.00.",
    "He won't, she shouldn't, I couldn't, they aren't.",
    "It’s a beautiful day, isn’t it?",
    "“Quoted text” with curly quotes.",
    "«Guillemets» and „low quotes“ too.",
    "I'LL BE THERE, YOU'RE RIGHT, WE'VE DONE IT, DON'T GO.",
    "a*b = c; x & y",
    "Single 'x quote and 'a word.",
    "ends with comma,",
    "ends with colon:",
    "trailing spaces.   ",
    "multiple   spaces\tand\ttabs here.",
    "1,000 people attended on 2023-05-08.",
    "running marathons",
    "ran a marathon",
    "mother of two, counselor & volunteer",
    "more'n enough and d'ye see",
    "",
    "...",
    "Hello..",
]


def main():
    ps = PorterStemmer()
    seen = set()
    with open(os.path.join(HERE, "porter_stems.tsv"), "w", encoding="utf-8") as f:
        f.write("# word\tNLTK %s PorterStemmer().stem(word)\n" % nltk.__version__)
        for w in WORDS:
            if w in seen:
                continue
            seen.add(w)
            f.write("%s\t%s\n" % (w, ps.stem(w)))
    tok = NLTKWordTokenizer()
    with open(os.path.join(HERE, "word_tokenize.jsonl"), "w", encoding="utf-8") as f:
        for s in SENTENCES:
            f.write(json.dumps({"in": s, "out": tok.tokenize(s)}, ensure_ascii=False) + "\n")
    print("nltk", nltk.__version__, len(seen), "stems,", len(SENTENCES), "sentences")


if __name__ == "__main__":
    main()
