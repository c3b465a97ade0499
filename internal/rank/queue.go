package rank

// Queue is a max-heap of row indexes by their scores: Pop returns the row of
// the best score left (ties in no set order). The scores must not change
// while their rows are queued.
type Queue struct {
	scores []float64
	h      []int
}

// NewQueue returns a queue of rows over scores, reusing rows' storage: the
// caller must not use rows afterwards.
func NewQueue(scores []float64, rows []int) *Queue {
	q := &Queue{scores: scores, h: rows}
	for j := len(q.h)/2 - 1; j >= 0; j-- {
		q.down(j)
	}
	return q
}

// Len returns the number of rows queued.
func (q *Queue) Len() int { return len(q.h) }

// Top returns the row of the best score left; the queue must not be empty.
func (q *Queue) Top() int { return q.h[0] }

// Pop removes and returns the row of the best score left; the queue must
// not be empty.
func (q *Queue) Pop() int {
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
