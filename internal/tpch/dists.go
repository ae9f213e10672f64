package tpch

// weighted is one member of a dbgen distribution and its weight.
type weighted struct {
	text   string
	weight int
}

// dist is a distribution of dbgen (dists.dss): a draw j in [1, total]
// picks the first member whose running total of weights reaches j
// (dbgen's pick_str).
type dist struct {
	words []string
	total int64
	index []uint8 // member picked by each j in [1, total]; index[0] unused
}

func newDist(ws []weighted) *dist {
	d := &dist{words: make([]string, len(ws))}
	for i, w := range ws {
		d.words[i] = w.text
		d.total += int64(w.weight)
	}
	d.index = make([]uint8, d.total+1)
	j := 1
	for i, w := range ws {
		for range w.weight {
			d.index[j] = uint8(i)
			j++
		}
	}
	return d
}

// uniformDist is a distribution whose members all weigh 1.
func uniformDist(words []string) *dist {
	ws := make([]weighted, len(words))
	for i, w := range words {
		ws[i] = weighted{w, 1}
	}
	return newDist(ws)
}

// pick draws one member's index from s.
func (d *dist) pick(s *stream) int { return int(d.index[s.uniform(1, d.total)]) }

// product returns every "a b" of a in as and b in bs, a outermost: the
// order of dists.dss for the syllable lists of 4.2.2.13.
func product(lists ...[]string) []string {
	out := []string{""}
	for _, l := range lists {
		var next []string
		for _, prefix := range out {
			for _, w := range l {
				if prefix == "" {
					next = append(next, w)
				} else {
					next = append(next, prefix+" "+w)
				}
			}
		}
		out = next
	}
	return out
}

// Lists of TPC-H 4.2.2.13 and 4.2.3, in the order of dists.dss.
var (
	// Types: syllable 1 × syllable 2 × syllable 3 (P_TYPE).
	typeSyllable1 = []string{"STANDARD", "SMALL", "MEDIUM", "LARGE", "ECONOMY", "PROMO"}
	typeSyllable2 = []string{"ANODIZED", "BURNISHED", "PLATED", "POLISHED", "BRUSHED"}
	typeSyllable3 = []string{"TIN", "NICKEL", "BRASS", "STEEL", "COPPER"}
	// Containers: syllable 1 × syllable 2 (P_CONTAINER).
	containerSyllable1 = []string{"SM", "LG", "MED", "JUMBO", "WRAP"}
	containerSyllable2 = []string{"CASE", "BOX", "BAG", "JAR", "PACK", "PKG", "CAN", "DRUM"}

	// Colors make up P_NAME (five distinct ones).
	colorWords = []string{
		"almond", "antique", "aquamarine", "azure", "beige", "bisque", "black", "blanched", "blue",
		"blush", "brown", "burlywood", "burnished", "chartreuse", "chiffon", "chocolate", "coral",
		"cornflower", "cornsilk", "cream", "cyan", "dark", "deep", "dim", "dodger", "drab", "firebrick",
		"floral", "forest", "frosted", "gainsboro", "ghost", "goldenrod", "green", "grey", "honeydew",
		"hot", "indian", "ivory", "khaki", "lace", "lavender", "lawn", "lemon", "light", "lime", "linen",
		"magenta", "maroon", "medium", "metallic", "midnight", "mint", "misty", "moccasin", "navajo",
		"navy", "olive", "orange", "orchid", "pale", "papaya", "peach", "peru", "pink", "plum", "powder",
		"puff", "purple", "red", "rose", "rosy", "royal", "saddle", "salmon", "sandy", "seashell",
		"sienna", "sky", "slate", "smoke", "snow", "spring", "steel", "tan", "thistle", "tomato",
		"turquoise", "violet", "wheat", "white", "yellow",
	}
	segmentWords     = []string{"AUTOMOBILE", "BUILDING", "FURNITURE", "HOUSEHOLD", "MACHINERY"}
	priorityWords    = []string{"1-URGENT", "2-HIGH", "3-MEDIUM", "4-NOT SPECIFIED", "5-LOW"}
	instructionWords = []string{"DELIVER IN PERSON", "COLLECT COD", "TAKE BACK RETURN", "NONE"}
	modeWords        = []string{"REG AIR", "AIR", "RAIL", "TRUCK", "MAIL", "FOB", "SHIP"}
	returnFlagWords  = []string{"R", "A"}
	regionWords      = []string{"AFRICA", "AMERICA", "ASIA", "EUROPE", "MIDDLE EAST"}

	// Q13's word pairs (qgen's Q13a and Q13b distributions).
	q13Words1 = []weighted{{"special", 20}, {"pending", 20}, {"unusual", 20}, {"express", 20}}
	q13Words2 = []weighted{{"packages", 40}, {"requests", 40}, {"accounts", 40}, {"deposits", 40}}
)

// Nations are the 25 rows of NATION (4.2.3) with their N_REGIONKEY.
var nations = []struct {
	name   string
	region int
}{
	{"ALGERIA", 0}, {"ARGENTINA", 1}, {"BRAZIL", 1}, {"CANADA", 1}, {"EGYPT", 4},
	{"ETHIOPIA", 0}, {"FRANCE", 3}, {"GERMANY", 3}, {"INDIA", 2}, {"INDONESIA", 2},
	{"IRAN", 4}, {"IRAQ", 4}, {"JAPAN", 2}, {"JORDAN", 4}, {"KENYA", 0},
	{"MOROCCO", 0}, {"MOZAMBIQUE", 0}, {"PERU", 1}, {"CHINA", 2}, {"ROMANIA", 3},
	{"SAUDI ARABIA", 4}, {"VIETNAM", 2}, {"RUSSIA", 3}, {"UNITED KINGDOM", 3}, {"UNITED STATES", 1},
}

// The distributions, built once.
var (
	typeDist        = uniformDist(product(typeSyllable1, typeSyllable2, typeSyllable3))
	containerDist   = uniformDist(product(containerSyllable1, containerSyllable2))
	colorDist       = uniformDist(colorWords)
	segmentDist     = uniformDist(segmentWords)
	priorityDist    = uniformDist(priorityWords)
	instructionDist = uniformDist(instructionWords)
	modeDist        = uniformDist(modeWords)
	returnFlagDist  = uniformDist(returnFlagWords)
	regionDist      = uniformDist(regionWords)
	nationDist      = uniformDist(nationNames()) // qgen's nations2
	q13Dist1        = newDist(q13Words1)
	q13Dist2        = newDist(q13Words2)

	nounDist        = newDist(nounsWords)
	verbDist        = newDist(verbsWords)
	adjectiveDist   = newDist(adjectivesWords)
	adverbDist      = newDist(adverbsWords)
	prepositionDist = newDist(prepositionsWords)
	auxiliaryDist   = newDist(auxiliariesWords)
	terminatorDist  = newDist(terminatorsWords)
	articleDist     = newDist(articlesWords)
	grammarDist     = newDist(grammarWords)
	nounPhraseDist  = newDist(nounPhrasesWords)
	verbPhraseDist  = newDist(verbPhrasesWords)
)

func nationNames() []string {
	out := make([]string, len(nations))
	for i, n := range nations {
		out[i] = n.name
	}
	return out
}
