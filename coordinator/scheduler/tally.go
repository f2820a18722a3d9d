package scheduler

// tally is what a job's status shows of its subtasks, kept as they change
// so that a status takes no walk over them: every change of an attempt's
// state goes through setTry, every new attempt through addTry, and
// settling through settleValue and unsettleValue.
type tally struct {
	// running is the unsettled subtasks with an attempt running.
	running                                            int
	sum                                                uint64 // of the settled subtasks' values
	restored, requeued, speculated, attempts, failures int
}

// addTry appends a running attempt to st.
func (j *job) addTry(st *subtask, t try) {
	st.tries = append(st.tries, t)
	j.tally.attempts++
	st.nrun++
	if st.nrun == 1 && !st.settled {
		j.tally.running++
	}
}

// setTry moves attempt t of st to state to.
func (j *job) setTry(st *subtask, t *try, to tryState) {
	wasRunning, wasFailure := t.state == tryRunning, t.failure()
	t.state = to
	if wasRunning && to != tryRunning {
		st.nrun--
		if st.nrun == 0 && !st.settled {
			j.tally.running--
		}
	}
	if f := t.failure(); f != wasFailure {
		if f {
			j.tally.failures++
		} else {
			j.tally.failures--
		}
	}
}

// settleValue settles st at v.
func (j *job) settleValue(st *subtask, v uint64) {
	if st.settled {
		j.tally.sum -= st.value
	} else {
		j.settled++
		if st.nrun > 0 {
			j.tally.running--
		}
	}
	st.settled, st.value = true, v
	j.tally.sum += v
}

// unsettleValue takes st's settlement back (its value stays, unused).
func (j *job) unsettleValue(st *subtask) {
	if !st.settled {
		return
	}
	j.settled--
	j.tally.sum -= st.value
	st.settled = false
	if st.nrun > 0 {
		j.tally.running++
	}
}
