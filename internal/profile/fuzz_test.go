package profile

import "testing"

// FuzzParseVUs: any --vus text gives a valid sequence or an error, never
// a panic or a sequence the driver could not run.
func FuzzParseVUs(f *testing.F) {
	for _, s := range []string{"4", "1,2,4,8", "fib:89", "pow2:128", "geo:256:1024:1.41", "geo:1:1000000:1.0000001",
		" 3 , 1 ", "fib:0", "geo:5:1:2", "geo:1:2:NaN", "1,,2", "x:1", "-1", "1e9"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		steps, err := ParseVUs(s)
		if err != nil {
			return
		}
		if len(steps) == 0 {
			t.Fatalf("ParseVUs(%q): no steps and no error", s)
		}
		seen := map[int]bool{}
		for _, v := range steps {
			if v < 1 || v > maxVUs {
				t.Errorf("ParseVUs(%q): step %d outside [1, %d]", s, v, maxVUs)
			}
			if seen[v] {
				t.Errorf("ParseVUs(%q): step %d twice", s, v)
			}
			seen[v] = true
		}
	})
}
