package kicad

import (
	"fmt"
	"math"
	"slices"
)

// The DC solver. A pour is millions of 0.25 mm cells, and conjugate
// gradients preconditioned by the diagonal needs iterations in proportion
// to the pour's width in cells (85 s on the 4-PE board's 550 000 cells).
// Preconditioned by smoothed-aggregation multigrid instead, the
// iterations stay a few dozen whatever the size: each level groups a
// node with the neighbours it is strongly joined to, and the coarse level
// corrects the smooth, board-wide part of the error that point
// relaxation only crawls across.

// csr is a sparse matrix in compressed rows.
type csr struct {
	n   int // rows
	ptr []int
	col []int32
	val []float64
}

func (a *csr) row(i int) ([]int32, []float64) {
	return a.col[a.ptr[i]:a.ptr[i+1]], a.val[a.ptr[i]:a.ptr[i+1]]
}

// mulVec sets out to a·x.
func (a *csr) mulVec(x, out []float64) {
	for i := range a.n {
		s := 0.0
		cols, vals := a.row(i)
		for k, j := range cols {
			s += vals[k] * x[j]
		}
		out[i] = s
	}
}

// transpose gives aᵀ, with m columns in a.
func (a *csr) transpose(m int) *csr {
	t := &csr{n: m, ptr: make([]int, m+1), col: make([]int32, len(a.col)), val: make([]float64, len(a.val))}
	for _, j := range a.col {
		t.ptr[j+1]++
	}
	for j := range m {
		t.ptr[j+1] += t.ptr[j]
	}
	next := slices.Clone(t.ptr[:m])
	for i := range a.n {
		cols, vals := a.row(i)
		for k, j := range cols {
			t.col[next[j]], t.val[next[j]] = int32(i), vals[k]
			next[j]++
		}
	}
	return t
}

// rowBuilder gathers a row's entries, adding those in the same column.
type rowBuilder struct {
	at   []int // column -> index in cols+1, 0 where absent
	cols []int32
	vals []float64
}

func newRowBuilder(m int) *rowBuilder { return &rowBuilder{at: make([]int, m)} }

func (r *rowBuilder) add(j int32, v float64) {
	if k := r.at[j]; k != 0 {
		r.vals[k-1] += v
		return
	}
	r.cols = append(r.cols, j)
	r.vals = append(r.vals, v)
	r.at[j] = len(r.cols)
}

// flush appends the row, sorted by column, to a and clears r.
func (r *rowBuilder) flush(a *csr) {
	slices.Sort(r.cols)
	for _, j := range r.cols {
		a.col = append(a.col, j)
		a.val = append(a.val, r.vals[r.at[j]-1])
		r.at[j] = 0
	}
	r.cols, r.vals = r.cols[:0], r.vals[:0]
	a.ptr = append(a.ptr, len(a.col))
	a.n++
}

// laplacian is the network's conductance matrix over its live nodes (in
// order of index): a node's row holds the sum of the conductances at it,
// those to the fixed nodes included, on its diagonal, and minus each
// conductance to another live node.
func laplacian(edges []edge, root []int, index []int32, live int) *csr {
	deg := make([]int, live+1)
	for _, e := range edges {
		a, b := index[root[e.a]], index[root[e.b]]
		if a >= 0 && b >= 0 && a != b {
			deg[a+1]++
			deg[b+1]++
		}
	}
	for i := range live {
		deg[i+1] += deg[i]
	}
	next := slices.Clone(deg[:live])
	cols := make([]int32, deg[live])
	vals := make([]float64, deg[live])
	diag := make([]float64, live)
	for _, e := range edges {
		ra, rb := root[e.a], root[e.b]
		if ra == rb {
			continue
		}
		a, b := index[ra], index[rb]
		if a >= 0 {
			diag[a] += e.g
		}
		if b >= 0 {
			diag[b] += e.g
		}
		if a >= 0 && b >= 0 {
			cols[next[a]], vals[next[a]] = b, -e.g
			next[a]++
			cols[next[b]], vals[next[b]] = a, -e.g
			next[b]++
		}
	}
	m := &csr{ptr: make([]int, 1, live+1), col: make([]int32, 0, deg[live]+live), val: make([]float64, 0, deg[live]+live)}
	r := newRowBuilder(live)
	for i := range live {
		r.add(int32(i), diag[i])
		for k := deg[i]; k < deg[i+1]; k++ {
			r.add(cols[k], vals[k])
		}
		r.flush(m)
	}
	return m
}

// amgLevel is one level of the multigrid hierarchy.
type amgLevel struct {
	a     *csr
	diag  []float64
	p, pt *csr // prolongation from the next level, and its transpose
	// work vectors: the level's right-hand side, solution and residual
	b, x, r []float64
}

// amg is a smoothed-aggregation multigrid preconditioner: one V-cycle,
// a forward Gauss-Seidel sweep before the coarse correction and a
// backward one after, so the preconditioner is symmetric as conjugate
// gradients needs.
type amg struct {
	levels []*amgLevel
	chol   []float64 // the coarsest level's Cholesky factor, dense
}

// amgCoarsest is the size at which a level is factored outright.
const amgCoarsest = 400

// amgDense is the mean entries per row past which a level's prolongation
// is left unsmoothed: smoothing widens the coarse level's rows, and past
// a 3 × 3 stencil the next ones fill in fast.
const amgDense = 10

func newAMG(a *csr) (*amg, error) {
	h := &amg{}
	for {
		l := &amgLevel{a: a, diag: make([]float64, a.n), b: make([]float64, a.n), x: make([]float64, a.n), r: make([]float64, a.n)}
		for i := range a.n {
			cols, vals := a.row(i)
			for k, j := range cols {
				if int(j) == i {
					l.diag[i] = vals[k]
				}
			}
			if l.diag[i] <= 0 {
				return nil, fmt.Errorf("the copper network is singular")
			}
		}
		h.levels = append(h.levels, l)
		if a.n <= amgCoarsest {
			break
		}
		agg, m := aggregate(a, l.diag)
		if m > a.n*9/10 {
			break // too little coarsens: relax only, at this level
		}
		if len(a.col) <= amgDense*a.n {
			l.p = smoothedProlongation(a, l.diag, agg, m)
		} else {
			l.p = plainProlongation(agg, m)
		}
		l.pt = l.p.transpose(m)
		a = galerkin(l.pt, a, l.p)
	}
	if last := h.levels[len(h.levels)-1].a; last.n <= amgCoarsest {
		h.chol = cholesky(last)
		if h.chol == nil {
			return nil, fmt.Errorf("the copper network is singular")
		}
	}
	return h, nil
}

// aggregate groups a's nodes: a node with its strong neighbours where
// none of them is taken yet, then every other node with the group of its
// strongest neighbour, and what is left with its own untaken neighbours.
// A neighbour is strong when its conductance is at least amgStrong of the
// geometric mean of the two diagonals. It gives each node's group and the
// number of groups.
func aggregate(a *csr, diag []float64) ([]int32, int) {
	const amgStrong = 0.08
	strong := func(i int, j int32, v float64) bool {
		return int(j) != i && math.Abs(v) >= amgStrong*math.Sqrt(diag[i]*diag[j])
	}
	agg := make([]int32, a.n)
	for i := range agg {
		agg[i] = -1
	}
	m := int32(0)
	for i := range a.n {
		cols, vals := a.row(i)
		free := true
		for k, j := range cols {
			if strong(i, j, vals[k]) && agg[j] >= 0 {
				free = false
				break
			}
		}
		if !free {
			continue
		}
		agg[i] = m
		for k, j := range cols {
			if strong(i, j, vals[k]) {
				agg[j] = m
			}
		}
		m++
	}
	first := slices.Clone(agg)
	for i := range a.n {
		if agg[i] >= 0 {
			continue
		}
		cols, vals := a.row(i)
		best := 0.0
		for k, j := range cols {
			if strong(i, j, vals[k]) && first[j] >= 0 && math.Abs(vals[k]) > best {
				agg[i], best = first[j], math.Abs(vals[k])
			}
		}
	}
	for i := range a.n {
		if agg[i] >= 0 {
			continue
		}
		agg[i] = m
		cols, vals := a.row(i)
		for k, j := range cols {
			if strong(i, j, vals[k]) && agg[j] < 0 {
				agg[j] = m
			}
		}
		m++
	}
	return agg, int(m)
}

// plainProlongation is T, the piecewise-constant prolongation of the
// groups.
func plainProlongation(agg []int32, m int) *csr {
	p := &csr{n: len(agg), ptr: make([]int, len(agg)+1), col: agg, val: make([]float64, len(agg))}
	for i := range agg {
		p.ptr[i+1] = i + 1
		p.val[i] = 1
	}
	return p
}

// smoothedProlongation is (I − ω D⁻¹ a) T, T the piecewise-constant
// prolongation of the groups, ω = 4/(3λ), λ ≥ the spectral radius of D⁻¹a
// by Gershgorin's bound.
func smoothedProlongation(a *csr, diag []float64, agg []int32, m int) *csr {
	lambda := 0.0
	for i := range a.n {
		_, vals := a.row(i)
		s := 0.0
		for _, v := range vals {
			s += math.Abs(v)
		}
		lambda = max(lambda, s/diag[i])
	}
	omega := 4 / (3 * lambda)
	p := &csr{ptr: make([]int, 1, a.n+1)}
	r := newRowBuilder(m)
	for i := range a.n {
		r.add(agg[i], 1)
		cols, vals := a.row(i)
		for k, j := range cols {
			r.add(agg[j], -omega*vals[k]/diag[i])
		}
		r.flush(p)
	}
	return p
}

// galerkin is the coarse operator pᵀ a p, pt being pᵀ.
func galerkin(pt, a, p *csr) *csr {
	c := &csr{ptr: make([]int, 1, pt.n+1)}
	r := newRowBuilder(pt.n)
	for ci := range pt.n {
		fines, ws := pt.row(ci)
		for k, i := range fines {
			cols, vals := a.row(int(i))
			for kk, j := range cols {
				w := ws[k] * vals[kk]
				pc, pv := p.row(int(j))
				for q, cj := range pc {
					r.add(cj, w*pv[q])
				}
			}
		}
		r.flush(c)
	}
	return c
}

// cholesky factors a small a densely, lower triangle by rows; nil when a
// is not positive definite.
func cholesky(a *csr) []float64 {
	n := a.n
	l := make([]float64, n*n)
	for i := range n {
		cols, vals := a.row(i)
		for k, j := range cols {
			l[i*n+int(j)] = vals[k]
		}
	}
	for j := range n {
		d := l[j*n+j]
		for k := range j {
			d -= l[j*n+k] * l[j*n+k]
		}
		if d <= 0 {
			return nil
		}
		d = math.Sqrt(d)
		l[j*n+j] = d
		for i := j + 1; i < n; i++ {
			s := l[i*n+j]
			for k := range j {
				s -= l[i*n+k] * l[j*n+k]
			}
			l[i*n+j] = s / d
		}
	}
	return l
}

// apply sets x to the preconditioned b: one V-cycle from zero.
func (h *amg) apply(b, x []float64) {
	top := h.levels[0]
	copy(top.b, b)
	h.cycle(0)
	copy(x, top.x)
}

func (h *amg) cycle(k int) {
	l := h.levels[k]
	clear(l.x)
	if k == len(h.levels)-1 {
		if h.chol != nil {
			choleskySolve(h.chol, l.a.n, l.b, l.x)
			return
		}
		for range 4 {
			l.sweep(false)
			l.sweep(true)
		}
		return
	}
	l.sweep(false)
	l.a.mulVec(l.x, l.r)
	for i := range l.r {
		l.r[i] = l.b[i] - l.r[i]
	}
	c := h.levels[k+1]
	l.pt.mulVec(l.r, c.b)
	h.cycle(k + 1)
	for i := range l.a.n {
		cols, vals := l.p.row(i)
		s := 0.0
		for q, j := range cols {
			s += vals[q] * c.x[j]
		}
		l.x[i] += s
	}
	l.sweep(true)
}

// sweep is one Gauss-Seidel sweep over the level, forward or backward.
func (l *amgLevel) sweep(backward bool) {
	n := l.a.n
	for s := range n {
		i := s
		if backward {
			i = n - 1 - s
		}
		cols, vals := l.a.row(i)
		r := l.b[i]
		for k, j := range cols {
			if int(j) != i {
				r -= vals[k] * l.x[j]
			}
		}
		l.x[i] = r / l.diag[i]
	}
}

func choleskySolve(l []float64, n int, b, x []float64) {
	for i := range n {
		s := b[i]
		for k := range i {
			s -= l[i*n+k] * x[k]
		}
		x[i] = s / l[i*n+i]
	}
	for i := n - 1; i >= 0; i-- {
		s := x[i]
		for k := i + 1; k < n; k++ {
			s -= l[k*n+i] * x[k]
		}
		x[i] = s / l[i*n+i]
	}
}

// pcg solves a·x = b by conjugate gradients preconditioned by h, to a
// residual 10⁻¹⁰ of b's.
func pcg(a *csr, h *amg, b []float64) ([]float64, error) {
	n := a.n
	x, r, z, p, q := make([]float64, n), slices.Clone(b), make([]float64, n), make([]float64, n), make([]float64, n)
	norm := dot(b, b)
	if norm == 0 {
		return x, nil
	}
	h.apply(r, z)
	copy(p, z)
	rz := dot(r, z)
	for range 1000 {
		if dot(r, r) <= 1e-20*norm {
			return x, nil
		}
		a.mulVec(p, q)
		alpha := rz / dot(p, q)
		for i := range n {
			x[i] += alpha * p[i]
			r[i] -= alpha * q[i]
		}
		h.apply(r, z)
		next := dot(r, z)
		for i := range n {
			p[i] = z[i] + next/rz*p[i]
		}
		rz = next
	}
	return nil, fmt.Errorf("the DC solution did not converge")
}
