package selfcheck

import (
	"math"
)

// Intervals of the loss lines of the self-check: the Gilbert model's losses counted as bursts
// (E. N. Gilbert, "Capacity of a burst-noise channel", Bell Syst. Tech. J. 39, 1960): in n
// packets the bursts start at the Good-to-Bad transitions, about Poisson with mean
// n pi_G p (pi_G = r / (p + r)), and each burst lasts a geometric number of packets with mean
// 1/r, so that B bursts hold L = B + NegBin(B, r) lost packets. The loss count of n packets is
// the compound of both. The check judges the number of bursts, their mean length given their
// number, and the loss rate, each with its exact 99 % interval under this model.

// minLossEvents is the fewest loss events (bursts for the Gilbert model, lost packets for
// random loss) a stream must expect for its loss lines to be judged: with fewer, the interval
// is so wide that a loss rate off by half passes, and the check says it needs a longer stream.
const minLossEvents = 20

// poissonInterval is the central interval [lo, hi] of a Poisson(mu) count holding at least
// conf of its mass (each tail at most (1 - conf)/2).
func poissonInterval(mu, conf float64) (lo, hi int) {
	if mu <= 0 {
		return 0, 0
	}
	top := int(mu + 20*math.Sqrt(mu) + 30)
	pl := make([]float64, top+1)
	lp := -mu // log pmf at 0
	for k := range pl {
		if k > 0 {
			lp += math.Log(mu) - math.Log(float64(k))
		}
		pl[k] = math.Exp(lp)
	}
	return pmfInterval(pl, conf)
}

// pmfInterval is the central interval [lo, hi] of a count whose probability mass function is
// pl (pl[k] = P(K = k), k = 0..len(pl)-1): lo the first k whose CDF exceeds (1 - conf)/2, hi
// the first whose CDF reaches 1 - (1 - conf)/2 (len(pl)-1 when the mass given never does).
func pmfInterval(pl []float64, conf float64) (lo, hi int) {
	tail := (1 - conf) / 2
	cdf := 0.0
	lo, hi = -1, len(pl)-1
	for k, q := range pl {
		cdf += q
		if lo < 0 && cdf > tail {
			lo = k
		}
		if cdf >= 1-tail {
			hi = k
			break
		}
	}
	return max(lo, 0), hi
}

// negBinInterval is the central interval of B + NegBin(B, r): the total length of B bursts of
// geometric lengths (>= 1 packet, mean 1/r), each tail at most (1 - conf)/2.
func negBinInterval(b int, r, conf float64) (lo, hi int) {
	if b <= 0 {
		return 0, 0
	}
	lo, hi = pmfInterval(negBinPMF(b, r, int(float64(b)/r*4+50)), conf)
	return b + lo, b + hi
}

// negBinPMF returns P(X = k), k = 0..top, of the extra packets X = L - B of B geometric bursts:
// C(k+B-1, k) r^B (1-r)^k.
func negBinPMF(b int, r float64, top int) []float64 {
	out := make([]float64, top+1)
	if r >= 1 {
		out[0] = 1
		return out
	}
	lp := float64(b) * math.Log(r)
	for k := 0; k <= top; k++ {
		if k > 0 {
			lp += math.Log(float64(k+b-1)) - math.Log(float64(k)) + math.Log(1-r)
		}
		out[k] = math.Exp(lp)
	}
	return out
}

// gilbertLossInterval is the central interval of the number of packets lost of n under the
// Gilbert model (p, r; every packet lost in Bad): the compound of Poisson(n pi_G p) bursts of
// geometric lengths, each tail at most (1 - conf)/2.
func gilbertLossInterval(n int, p, r, conf float64) (lo, hi int) {
	mu := float64(n) * r / (p + r) * p
	_, bmax := poissonInterval(mu, 1-1e-9)
	pl := make([]float64, n+1)
	lpois := -mu
	for b := 0; b <= bmax; b++ {
		if b > 0 {
			lpois += math.Log(mu) - math.Log(float64(b))
		}
		w := math.Exp(lpois)
		if b == 0 {
			pl[0] += w
			continue
		}
		for k, q := range negBinPMF(b, r, n-b) {
			if b+k <= n {
				pl[b+k] += w * q
			}
		}
	}
	return pmfInterval(pl, conf)
}
