package railroad

// fifo is a first-in first-out queue on a ring buffer that grows as needed.
// The zero value is an empty queue.
type fifo[T any] struct {
	buf  []T
	head int // index of the oldest element
	n    int // number of elements
}

func (q *fifo[T]) len() int { return q.n }

func (q *fifo[T]) push(v T) {
	if q.n == len(q.buf) {
		buf := make([]T, max(4, 2*len(q.buf)))
		for i := range q.n {
			buf[i] = q.buf[(q.head+i)%len(q.buf)]
		}
		q.buf, q.head = buf, 0
	}
	q.buf[(q.head+q.n)%len(q.buf)] = v
	q.n++
}

// pop removes and returns the oldest element; the queue must not be empty.
func (q *fifo[T]) pop() T {
	var zero T
	v := q.buf[q.head]
	q.buf[q.head] = zero // let the garbage collector have it
	q.head = (q.head + 1) % len(q.buf)
	q.n--
	return v
}

// remove deletes the oldest element for which match is true, keeping the order
// of the rest. It costs O(n).
func (q *fifo[T]) remove(match func(T) bool) bool {
	for i := range q.n {
		if match(q.buf[(q.head+i)%len(q.buf)]) {
			for k := i; k < q.n-1; k++ {
				q.buf[(q.head+k)%len(q.buf)] = q.buf[(q.head+k+1)%len(q.buf)]
			}
			var zero T
			q.buf[(q.head+q.n-1)%len(q.buf)] = zero
			q.n--
			return true
		}
	}
	return false
}

// reset empties the queue and lets go of a buffer larger than 16 elements.
func (q *fifo[T]) reset() {
	if len(q.buf) > 16 {
		q.buf = nil
	} else {
		clear(q.buf)
	}
	q.head, q.n = 0, 0
}
