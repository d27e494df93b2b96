// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/ops/attention/reference.hpp -- the plain reference: one sequence at a time, in double.
//
// It states the semantics every kernel must reproduce (docs/attention.md):
//   s(i, j) = scale * q_i . k_j;  s = softcap * tanh(s / softcap) if softcap > 0;
//   s -= slope[h] * |i + off - j| with ALiBi;  s = score_mod(s, b, h, i, j);
//   key j is visible iff j < sk, j <= i + off + window_right (if >= 0; causal: 0),
//   j >= i + off - window_left (if >= 0), and mask_mod(b, h, i, j);
//   off = sk - sq (bottom-right alignment) or 0 (top-left);
//   a sink logit (per head) joins the denominator only;
//   o_i = sum_j p_ij v_j with p = softmax over visible keys (and the sink), LSE = log(sum exp);
//   a row with no visible key (and no sink): o = 0, LSE = -inf.
#pragma once

#include <cmath>
#include <limits>
#include <vector>

#include "strata/ops/attention/mods.hpp"
#include "strata/ops/attention/philox.hpp"
#include "strata/ops/attention/types.hpp"

namespace strata::attn::reference {

struct problem {
  int heads = 1, heads_k = 1, d = 0, dv = 0;
  double scale = 0;  // already resolved (no NaN)
  bool causal = false;
  alignment align = alignment::bottom_right;
  int window_left = -1, window_right = -1;
  double softcap = 0;
  std::vector<float> alibi, sinks;  // empty: off
  float dropout_p = 0.f;            // dropout on P after normalization (philox.hpp's mask and scaling)
  unsigned long long seed = 0, offset = 0;
};

/// One sequence: q (sq, H, D), k (sk, HK, D), v (sk, HK, Dv), row-major, in double.
struct sequence {
  int sq = 0, sk = 0;
  std::vector<double> q, k, v;
};

struct result {
  std::vector<double> o;    // (sq, H, Dv)
  std::vector<double> lse;  // (H, sq)
};

/// The dropout factor of (b, h, i, j): 0 (dropped) or 256 / (256 - t), t = round(256 p) (philox.hpp:
/// 1 / (1 - the rate applied)); 1 without dropout.
inline double drop_factor(const problem& p, int b, int h, int i, int j) {
  if (p.dropout_p <= 0.f) return 1.0;
  const std::uint32_t t = dropout_threshold(p.dropout_p);
  return dropout_keep(p.seed, p.offset, t, b, p.heads, h, i, j) ? 256.0 / (256.0 - static_cast<double>(t)) : 0.0;
}

template <class ScoreMod = no_score_mod, class MaskMod = no_mask_mod>
result forward(const problem& p, const sequence& s, int batch_index, const ScoreMod& score_mod = {},
               const MaskMod& mask_mod = {}) {
  result r;
  r.o.assign(static_cast<std::size_t>(s.sq) * p.heads * p.dv, 0.0);
  r.lse.assign(static_cast<std::size_t>(p.heads) * s.sq, -std::numeric_limits<double>::infinity());
  const int group = p.heads / p.heads_k;
  const int off = p.align == alignment::bottom_right ? s.sk - s.sq : 0;
  const int wr = p.causal ? 0 : p.window_right;
  std::vector<double> logit(static_cast<std::size_t>(s.sk));
  std::vector<char> vis(static_cast<std::size_t>(s.sk));
  for (int h = 0; h < p.heads; ++h) {
    const int hk = h / group;
    for (int i = 0; i < s.sq; ++i) {
      double mx = -std::numeric_limits<double>::infinity();
      const bool sink = !p.sinks.empty();
      if (sink) mx = p.sinks[h];
      for (int j = 0; j < s.sk; ++j) {
        double x = 0;
        for (int c = 0; c < p.d; ++c)
          x += s.q[(static_cast<std::size_t>(i) * p.heads + h) * p.d + c] * s.k[(static_cast<std::size_t>(j) * p.heads_k + hk) * p.d + c];
        x *= p.scale;
        if (p.softcap > 0) x = p.softcap * std::tanh(x / p.softcap);
        if (!p.alibi.empty()) x -= p.alibi[h] * std::abs(static_cast<double>(i + off - j));
        x = score_mod(static_cast<float>(x), batch_index, h, i, j);
        bool keep = true;
        if (wr >= 0) keep = keep && j <= i + off + wr;
        if (p.window_left >= 0) keep = keep && j >= i + off - p.window_left;
        keep = keep && mask_mod(batch_index, h, i, j);
        vis[j] = keep;
        logit[j] = x;
        if (keep) mx = std::max(mx, x);
      }
      if (mx == -std::numeric_limits<double>::infinity()) continue;  // fully masked: zeros, -inf
      double l = sink ? std::exp(p.sinks[h] - mx) : 0.0;
      double* o = &r.o[(static_cast<std::size_t>(i) * p.heads + h) * p.dv];
      for (int j = 0; j < s.sk; ++j) {
        if (!vis[j]) continue;
        const double e = std::exp(logit[j] - mx);
        l += e;
        const double z = drop_factor(p, batch_index, h, i, j);
        for (int c = 0; c < p.dv; ++c) o[c] += e * z * s.v[(static_cast<std::size_t>(j) * p.heads_k + hk) * p.dv + c];
      }
      for (int c = 0; c < p.dv; ++c) o[c] /= l;
      r.lse[static_cast<std::size_t>(h) * s.sq + i] = mx + std::log(l);
    }
  }
  return r;
}

struct gradients {
  std::vector<double> dq, dk, dv;  // layouts of q, k, v
  std::vector<double> dsinks;      // (heads), when the problem has sinks
};

/// Gradients of L = sum(dout o O) (dout: (sq, H, Dv)) by the chain rule through the reference
/// forward's formulas, in double. A score_mod's derivative is its grad() member (mods.hpp).
template <class ScoreMod = no_score_mod, class MaskMod = no_mask_mod>
gradients backward(const problem& p, const sequence& s, int batch_index, const std::vector<double>& dout,
                   const ScoreMod& score_mod = {}, const MaskMod& mask_mod = {}) {
  const result fw = forward(p, s, batch_index, score_mod, mask_mod);
  gradients g;
  g.dq.assign(s.q.size(), 0.0);
  g.dk.assign(s.k.size(), 0.0);
  g.dv.assign(s.v.size(), 0.0);
  g.dsinks.assign(p.sinks.size(), 0.0);
  const int group = p.heads / p.heads_k;
  const int off = p.align == alignment::bottom_right ? s.sk - s.sq : 0;
  const int wr = p.causal ? 0 : p.window_right;
  std::vector<double> pr(static_cast<std::size_t>(s.sk)), dfac(static_cast<std::size_t>(s.sk));
  for (int h = 0; h < p.heads; ++h) {
    const int hk = h / group;
    for (int i = 0; i < s.sq; ++i) {
      const double lse = fw.lse[static_cast<std::size_t>(h) * s.sq + i];
      if (std::isinf(lse)) continue;
      const double* o = &fw.o[(static_cast<std::size_t>(i) * p.heads + h) * p.dv];
      const double* dO = &dout[(static_cast<std::size_t>(i) * p.heads + h) * p.dv];
      double di = 0;
      for (int c = 0; c < p.dv; ++c) di += dO[c] * o[c];
      if (!p.sinks.empty()) g.dsinks[h] -= std::exp(p.sinks[h] - lse) * di;
      for (int j = 0; j < s.sk; ++j) {
        bool keep = true;
        if (wr >= 0) keep = keep && j <= i + off + wr;
        if (p.window_left >= 0) keep = keep && j >= i + off - p.window_left;
        keep = keep && mask_mod(batch_index, h, i, j);
        if (!keep) continue;
        double x = 0;
        for (int c = 0; c < p.d; ++c)
          x += s.q[(static_cast<std::size_t>(i) * p.heads + h) * p.d + c] * s.k[(static_cast<std::size_t>(j) * p.heads_k + hk) * p.d + c];
        x *= p.scale;
        double df = p.scale;
        if (p.softcap > 0) {
          const double t = std::tanh(x / p.softcap);
          x = p.softcap * t;
          df *= 1 - t * t;
        }
        if (!p.alibi.empty()) x -= p.alibi[h] * std::abs(static_cast<double>(i + off - j));
        df *= score_mod.grad(static_cast<float>(x), batch_index, h, i, j);
        x = score_mod(static_cast<float>(x), batch_index, h, i, j);
        if (std::isinf(x) && x < 0) continue;  // a score_mod that masks: P = 0, no gradient
        const double pij = std::exp(x - lse), z = drop_factor(p, batch_index, h, i, j);
        double dp = 0;
        for (int c = 0; c < p.dv; ++c) {
          const std::size_t vi = (static_cast<std::size_t>(j) * p.heads_k + hk) * p.dv + c;
          g.dv[vi] += pij * z * dO[c];
          dp += dO[c] * s.v[vi];
        }
        const double ds = pij * (dp * z - di) * df;
        for (int c = 0; c < p.d; ++c) {
          const std::size_t qi = (static_cast<std::size_t>(i) * p.heads + h) * p.d + c;
          const std::size_t ki = (static_cast<std::size_t>(j) * p.heads_k + hk) * p.d + c;
          g.dq[qi] += ds * s.k[ki];
          g.dk[ki] += ds * s.q[qi];
        }
      }
    }
  }
  return g;
}

}  // namespace strata::attn::reference
