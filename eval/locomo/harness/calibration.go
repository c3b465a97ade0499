package harness

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/higmem/higmem/llm"
)

// CalibrationFile holds a run's judge calibration.
const CalibrationFile = "judge_calibration.json"

// CalibrationCase is an answer whose grade is known.
type CalibrationCase struct {
	Question string `json:"question"`
	Gold     string `json:"gold"`
	Answer   string `json:"answer"`
	// Correct is the grade the judge prompt's own rules give.
	Correct bool `json:"correct"`
}

// CalibrationSet is what a judge must grade as expected before its J is
// reported: answers right in other words and date formats, and answers
// wrong by contradiction, by the wrong person or date, and by saying the
// information is not available, which the judge prompt defines as WRONG.
var CalibrationSet = []CalibrationCase{
	{"When did Caroline go to the LGBTQ support group?", "7 May 2023", "May 7, 2023", true},
	{"When did Caroline go to the LGBTQ support group?", "7 May 2023", "On the 7th of May 2023", true},
	{"What did Melanie paint recently?", "a lake sunrise", "She painted a sunrise over a lake.", true},
	{"Where did Caroline move from?", "Sweden", "Sweden, four years ago", true},
	{"What is Caroline's identity?", "transgender woman", "Caroline is a trans woman", true},
	{"When did Caroline go to the LGBTQ support group?", "7 May 2023", "Not mentioned in the conversation", false},
	{"What did Melanie paint recently?", "a lake sunrise", "Not mentioned in the conversation", false},
	{"Where did Caroline move from?", "Sweden", "The information is not available.", false},
	{"Where did Caroline move from?", "Sweden", "Norway", false},
	{"Who went to the pottery class?", "Melanie", "Caroline", false},
	{"When did Caroline go to the LGBTQ support group?", "7 May 2023", "8 June 2022", false},
	{"What did Melanie paint recently?", "a lake sunrise", "a portrait of her dog", false},
}

// MinCalibration is the share of the known-right answers a judge must
// grade CORRECT; every known-wrong answer must be graded WRONG.
const MinCalibration = 0.8

// Calibration is how a judge graded CalibrationSet.
type Calibration struct {
	Model string `json:"model,omitempty"`
	// RightCorrect of Right known-right answers were graded CORRECT;
	// WrongCorrect of Wrong known-wrong ones were (wrongly) graded CORRECT.
	Right        int `json:"right"`
	RightCorrect int `json:"right_correct"`
	Wrong        int `json:"wrong"`
	WrongCorrect int `json:"wrong_correct"`
	// Errors counts unusable judge replies (they count as disagreements).
	Errors int `json:"errors"`
	// Passed is true when no known-wrong answer was graded CORRECT and at
	// least MinCalibration of the known-right ones were.
	Passed bool `json:"passed"`
	// Misgraded lists the cases the judge got wrong.
	Misgraded []CalibrationCase `json:"misgraded,omitempty"`
	// Stopped is set when grading stopped at a call that failed or at the
	// first known-wrong answer graded CORRECT (Right and Wrong count the
	// cases graded).
	Stopped bool `json:"stopped,omitempty"`
}

// String summarises the calibration.
func (c Calibration) String() string {
	verdict := "passed"
	if !c.Passed {
		verdict = "FAILED"
	}
	stopped := ""
	if c.Stopped {
		stopped = " (stopped early)"
	}
	return fmt.Sprintf("%s: %d/%d right answers graded CORRECT, %d/%d wrong answers graded CORRECT, %d unusable replies%s",
		verdict, c.RightCorrect, c.Right, c.WrongCorrect, c.Wrong, c.Errors, stopped)
}

// Calibrate grades CalibrationSet with judge. Unusable replies and calls
// that fail (the endpoint down or timing out after its retries) count
// against the judge; only the end of ctx is an error. It stops at the
// first call that fails and at the first known-wrong answer graded
// CORRECT: the judge has failed then, and a slow small model need not
// grade the rest.
func Calibrate(ctx context.Context, judge llm.Model) (Calibration, error) {
	var c Calibration
	for _, k := range CalibrationSet {
		v, err := Judge(ctx, judge, k.Question, k.Gold, k.Answer, 0)
		if err != nil {
			if ctx.Err() != nil {
				return c, fmt.Errorf("harness: judge calibration: %w", err)
			}
			v.Error = err.Error()
			c.Stopped = true
		}
		if k.Correct {
			c.Right++
		} else {
			c.Wrong++
		}
		switch {
		case v.Error != "":
			c.Errors++
			c.Misgraded = append(c.Misgraded, k)
		case v.Correct && k.Correct:
			c.RightCorrect++
		case v.Correct:
			c.WrongCorrect++
			c.Misgraded = append(c.Misgraded, k)
		case k.Correct:
			c.Misgraded = append(c.Misgraded, k)
		}
		if c.WrongCorrect > 0 {
			c.Stopped = true
		}
		if c.Stopped {
			break
		}
	}
	c.Passed = c.WrongCorrect == 0 && float64(c.RightCorrect) >= MinCalibration*float64(c.Right) &&
		c.Errors <= c.Right-c.RightCorrect
	return c, nil
}

// readCalibration reads a run's calibration (nil when the run has none).
func readCalibration(dir string) (*Calibration, error) {
	b, err := os.ReadFile(filepath.Join(dir, CalibrationFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var c Calibration
	if err := json.Unmarshal(b, &c); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrCorrupt, CalibrationFile, err)
	}
	return &c, nil
}
