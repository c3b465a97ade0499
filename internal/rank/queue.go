package rank

// Queue is a max-heap of row indexes by their scores: Pop returns the row of
// the best score left (ties in no set order). The scores must not change
// while their rows are queued, and none may be NaN.
//
// A caller that pops a few rows of many (the pruned offline scorer pops
// tens of a list of up to tens of thousands) should not pay for ordering
// them all: of more than 4*firstBatch rows, the heap holds at first only
// those at least a floor that about firstBatch of them reach, estimated
// from a sample, and the others wait in a list until the heap runs out;
// then they all go into it.
type Queue struct {
	scores []float64
	h      []int
	// rest holds rows scoring at most every row of h, not yet in the
	// heap; refilled tells whether the heap took them already.
	rest     []int
	refilled bool
}

// firstBatch is about the number of rows the heap takes at first when more
// than four times as many are queued.
const firstBatch = 512

// samples is the number of rows NewQueue reads to set its floor.
const samples = 1024

// NewQueue returns a queue of rows over scores, reusing rows' storage: the
// caller must not use rows afterwards.
func NewQueue(scores []float64, rows []int) *Queue {
	q := &Queue{scores: scores}
	if len(rows) <= 4*firstBatch {
		q.heapify(rows)
		q.refilled = true
		return q
	}
	// The floor: the r-th best score of every st-th row (samples of
	// them), which about r*st rows reach (st >= 2, so r <= firstBatch/2).
	st := len(rows) / samples
	r := max(firstBatch/st, 8)
	var top [firstBatch / 2]float64
	k := 0
	for j := 0; j < len(rows); j += st {
		s := scores[rows[j]]
		if k < r {
			// The first r samples make a min-heap.
			top[k] = s
			SiftUp(top[:], k)
			k++
		} else if s > top[0] {
			top[0] = s
			SiftMin(top[:r], 0)
		}
	}
	// Rows at least the floor to the end, the others before them.
	floor, k := top[0], len(rows)
	for j := len(rows) - 1; j >= 0; j-- {
		if i := rows[j]; scores[i] >= floor {
			k--
			rows[j], rows[k] = rows[k], i
		}
	}
	q.rest = rows[:k]
	q.heapify(rows[k:])
	return q
}

// SiftUp moves top[c] up to its place in the min-heap top[:c+1].
func SiftUp(top []float64, c int) {
	for ; c > 0 && top[(c-1)/2] > top[c]; c = (c - 1) / 2 {
		top[c], top[(c-1)/2] = top[(c-1)/2], top[c]
	}
}

// SiftMin moves top[j] down to its place in the min-heap top.
func SiftMin(top []float64, j int) {
	for {
		l, r, w := 2*j+1, 2*j+2, j
		if l < len(top) && top[l] < top[w] {
			w = l
		}
		if r < len(top) && top[r] < top[w] {
			w = r
		}
		if w == j {
			return
		}
		top[j], top[w] = top[w], top[j]
		j = w
	}
}

// heapify makes a heap of rows.
func (q *Queue) heapify(rows []int) {
	q.h = rows
	for j := len(q.h)/2 - 1; j >= 0; j-- {
		q.down(j)
	}
}

// fill moves the rows waiting into the heap once it is empty.
func (q *Queue) fill() {
	if len(q.h) == 0 && !q.refilled {
		q.heapify(q.rest)
		q.rest, q.refilled = nil, true
	}
}

// Len returns the number of rows queued.
func (q *Queue) Len() int { return len(q.h) + len(q.rest) }

// Top returns the row of the best score left; the queue must not be empty.
func (q *Queue) Top() int {
	q.fill()
	return q.h[0]
}

// Pop removes and returns the row of the best score left; the queue must
// not be empty.
func (q *Queue) Pop() int {
	q.fill()
	i := q.h[0]
	q.h[0] = q.h[len(q.h)-1]
	q.h = q.h[:len(q.h)-1]
	q.down(0)
	return i
}

// down moves the row at j down to its place.
func (q *Queue) down(j int) {
	h, s := q.h, q.scores
	for {
		l, r, w := 2*j+1, 2*j+2, j
		if l < len(h) && s[h[l]] > s[h[w]] {
			w = l
		}
		if r < len(h) && s[h[r]] > s[h[w]] {
			w = r
		}
		if w == j {
			return
		}
		h[j], h[w] = h[w], h[j]
		j = w
	}
}
