package research

import (
	"errors"
	"math"
)

// Logit is a fitted logistic regression on standardised features:
// p(y=1|x) = σ(B + Σ W_k (x_k − Mu_k)/SD_k). Iters is the number of Newton
// steps the fit took.
type Logit struct {
	Mu, SD, W []float64
	B         float64
	Iters     int
}

// Prob returns the model's probability for features x.
func (m *Logit) Prob(x []float64) float64 {
	z := m.B
	for k, w := range m.W {
		z += w * (x[k] - m.Mu[k]) / m.SD[k]
	}
	return 1 / (1 + math.Exp(-z))
}

// FitStandardised standardises the first d features of xs (mean 0, sd 1
// over the rows; the sd plus 1e-9, as the Python probe had it, so that a
// constant column stays at 0) and fits the L2-regularised logistic regression
// on them (FitLogistic).
func FitStandardised(xs [][]float64, d int, y []float64, lambda float64) (*Logit, error) {
	n := len(xs)
	m := &Logit{Mu: make([]float64, d), SD: make([]float64, d)}
	for _, x := range xs {
		for k := range d {
			m.Mu[k] += x[k]
		}
	}
	for k := range d {
		m.Mu[k] /= float64(n)
	}
	for _, x := range xs {
		for k := range d {
			m.SD[k] += (x[k] - m.Mu[k]) * (x[k] - m.Mu[k])
		}
	}
	for k := range d {
		m.SD[k] = math.Sqrt(m.SD[k]/float64(n)) + 1e-9
	}
	z := make([]float64, n*d)
	for i, x := range xs {
		for k := range d {
			z[i*d+k] = (x[k] - m.Mu[k]) / m.SD[k]
		}
	}
	var err error
	m.W, m.B, m.Iters, err = FitLogistic(z, d, y, lambda)
	return m, err
}

// softplus is log(1 + e^z), computed without overflow.
func softplus(z float64) float64 { return max(z, 0) + math.Log1p(math.Exp(-math.Abs(z))) }

// FitLogistic fits p(y=1|x) = σ(b + w·x) to the rows of x (n × d, row
// major) by minimising Σ log-loss + lambda/2 |w|² (the intercept b not
// penalised; lambda = 1/C of sklearn's LogisticRegression) with Newton's
// method, halving a step that does not lower the objective. It stops when
// no coordinate moves by more than 1e-10, and fails when the Hessian is
// not positive definite (lambda 0 on separable or degenerate data) or
// after 100 steps.
func FitLogistic(x []float64, d int, y []float64, lambda float64) (w []float64, b float64, iters int, err error) {
	n := len(y)
	p := d + 1 // the intercept last
	theta := make([]float64, p)
	objective := func(th []float64) float64 {
		o := 0.0
		for i := range n {
			z := th[d]
			for k := range d {
				z += th[k] * x[i*d+k]
			}
			if y[i] > 0 {
				o += softplus(-z)
			} else {
				o += softplus(z)
			}
		}
		for k := range d {
			o += lambda / 2 * th[k] * th[k]
		}
		return o
	}
	obj := objective(theta)
	grad := make([]float64, p)
	hess := make([]float64, p*p)
	row := make([]float64, p)
	for iters = 1; iters <= 100; iters++ {
		clear(grad)
		clear(hess)
		for i := range n {
			copy(row, x[i*d:(i+1)*d])
			row[d] = 1
			z := 0.0
			for k := range p {
				z += theta[k] * row[k]
			}
			pr := 1 / (1 + math.Exp(-z))
			r, v := pr-y[i], pr*(1-pr)
			for k := range p {
				grad[k] += r * row[k]
				vk := v * row[k]
				h := hess[k*p : k*p+k+1]
				for l := range h {
					h[l] += vk * row[l]
				}
			}
		}
		for k := range d {
			grad[k] += lambda * theta[k]
			hess[k*p+k] += lambda
		}
		for k := range p {
			for l := k + 1; l < p; l++ {
				hess[k*p+l] = hess[l*p+k]
			}
		}
		step, ok := solveSPD(hess, grad, p)
		if !ok {
			return nil, 0, iters, errors.New("logistic regression: the Hessian is not positive definite")
		}
		next := make([]float64, p)
		for t := 1.0; ; t /= 2 {
			for k := range p {
				next[k] = theta[k] - t*step[k]
			}
			if o := objective(next); o <= obj || t < 1e-6 {
				obj = o
				break
			}
		}
		moved := 0.0
		for k := range p {
			moved = max(moved, math.Abs(next[k]-theta[k]))
		}
		theta = next
		if moved < 1e-10 {
			return theta[:d], theta[d], iters, nil
		}
	}
	return theta[:d], theta[d], iters, errors.New("logistic regression: no convergence in 100 Newton steps")
}

// solveSPD solves A s = g for a symmetric positive definite A (p × p, row
// major) by Cholesky; false when A is not positive definite.
func solveSPD(a, g []float64, p int) ([]float64, bool) {
	l := make([]float64, p*p)
	for i := range p {
		for j := 0; j <= i; j++ {
			s := a[i*p+j]
			for k := range j {
				s -= l[i*p+k] * l[j*p+k]
			}
			if i == j {
				if s <= 1e-12*max(1, math.Abs(a[i*p+i])) {
					return nil, false
				}
				l[i*p+i] = math.Sqrt(s)
			} else {
				l[i*p+j] = s / l[j*p+j]
			}
		}
	}
	z := make([]float64, p)
	for i := range p {
		s := g[i]
		for k := range i {
			s -= l[i*p+k] * z[k]
		}
		z[i] = s / l[i*p+i]
	}
	out := make([]float64, p)
	for i := p - 1; i >= 0; i-- {
		s := z[i]
		for k := i + 1; k < p; k++ {
			s -= l[k*p+i] * out[k]
		}
		out[i] = s / l[i*p+i]
	}
	return out, true
}

// Raw returns the model in raw units, the standardisation folded in: the
// log-odds are b + Σ w_k x_k.
func (m *Logit) Raw() (w []float64, b float64) {
	w = make([]float64, len(m.W))
	b = m.B
	for k := range m.W {
		w[k] = m.W[k] / m.SD[k]
		b -= m.W[k] * m.Mu[k] / m.SD[k]
	}
	return w, b
}
