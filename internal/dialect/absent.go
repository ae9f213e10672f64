package dialect

// AbsenceReporter is implemented by a Database whose server was found,
// when it was opened, to lack views or commands its dialect uses where the
// product offers them: a SQL Server login without VIEW SERVER STATE, or
// Babelfish for PostgreSQL, which speaks SQL Server's protocol without
// SQL Server's dynamic management views. Such a Database does not
// implement the optional interfaces whose figures would come from what is
// missing (no TxCounter without the transaction counter, no WaitSampler
// without the wait views), so shared code falls back as it does for a
// dialect without them; Absences says what is missing and what oltplab
// does instead, one labelled line each, for the user to read before
// trusting a figure.
type AbsenceReporter interface {
	Absences() []Absence
}

// Absence is one view or command a server lacks.
type Absence struct {
	// What is missing, in the engine's own words:
	// "sys.dm_os_performance_counters".
	What string `json:"what"`
	// Instead is what oltplab does without it: "TPM is the driver's own
	// commit count".
	Instead string `json:"instead"`
}

// String is the labelled line: "absent on this server: WHAT (INSTEAD)".
func (a Absence) String() string {
	return "absent on this server: " + a.What + " (" + a.Instead + ")"
}
