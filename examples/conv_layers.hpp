// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// examples/conv_layers.hpp -- the convolution layers of ResNet-50 (v1.5: the stride sits in the 3x3
// convolution of each first bottleneck) and of a 2D U-Net (the original's 3x3 encoder/decoder
// convolutions at 256 x 256 input, padded so sizes are kept), as strata::ops::conv problems at batch n.
// Shared by examples/conv.cpp (--resnet50, --unet) and benchmark/conv_bench.cpp.
#pragma once

#include <string>
#include <vector>

#include <strata/conv.hpp>

namespace strata_examples {

struct conv_layer {
  std::string name;
  strata::ops::conv::problem problem;
};

inline strata::ops::conv::problem conv2d(int n, int hw, int c, int k, int rs, int stride, int pad) {
  return {.n = n, .c = c, .k = k, .input = {1, hw, hw}, .filter = {1, rs, rs}, .stride = {1, stride, stride},
          .pad = {0, pad, pad}, .pad_end = {0, pad, pad}};
}

/// Every distinct convolution of ResNet-50 (NHWC; repeated blocks listed once).
inline std::vector<conv_layer> resnet50_layers(int n) {
  return {
      {"conv1 7x7/2", conv2d(n, 224, 3, 64, 7, 2, 3)},
      {"res2 1x1 64>64", conv2d(n, 56, 64, 64, 1, 1, 0)},
      {"res2 3x3 64", conv2d(n, 56, 64, 64, 3, 1, 1)},
      {"res2 1x1 64>256", conv2d(n, 56, 64, 256, 1, 1, 0)},
      {"res2 1x1 256>64", conv2d(n, 56, 256, 64, 1, 1, 0)},
      {"res3 1x1 256>128", conv2d(n, 56, 256, 128, 1, 1, 0)},
      {"res3 3x3/2 128", conv2d(n, 56, 128, 128, 3, 2, 1)},
      {"res3 down 1x1/2 256>512", conv2d(n, 56, 256, 512, 1, 2, 0)},
      {"res3 1x1 128>512", conv2d(n, 28, 128, 512, 1, 1, 0)},
      {"res3 1x1 512>128", conv2d(n, 28, 512, 128, 1, 1, 0)},
      {"res3 3x3 128", conv2d(n, 28, 128, 128, 3, 1, 1)},
      {"res4 1x1 512>256", conv2d(n, 28, 512, 256, 1, 1, 0)},
      {"res4 3x3/2 256", conv2d(n, 28, 256, 256, 3, 2, 1)},
      {"res4 down 1x1/2 512>1024", conv2d(n, 28, 512, 1024, 1, 2, 0)},
      {"res4 1x1 256>1024", conv2d(n, 14, 256, 1024, 1, 1, 0)},
      {"res4 1x1 1024>256", conv2d(n, 14, 1024, 256, 1, 1, 0)},
      {"res4 3x3 256", conv2d(n, 14, 256, 256, 3, 1, 1)},
      {"res5 1x1 1024>512", conv2d(n, 14, 1024, 512, 1, 1, 0)},
      {"res5 3x3/2 512", conv2d(n, 14, 512, 512, 3, 2, 1)},
      {"res5 down 1x1/2 1024>2048", conv2d(n, 14, 1024, 2048, 1, 2, 0)},
      {"res5 1x1 512>2048", conv2d(n, 7, 512, 2048, 1, 1, 0)},
      {"res5 1x1 2048>512", conv2d(n, 7, 2048, 512, 1, 1, 0)},
      {"res5 3x3 512", conv2d(n, 7, 512, 512, 3, 1, 1)},
  };
}

/// The 3x3 convolutions of a 2D U-Net at 256 x 256 (same padding), encoder and decoder.
inline std::vector<conv_layer> unet_layers(int n) {
  return {
      {"enc1 3x3 3>64", conv2d(n, 256, 3, 64, 3, 1, 1)},     {"enc1 3x3 64", conv2d(n, 256, 64, 64, 3, 1, 1)},
      {"enc2 3x3 64>128", conv2d(n, 128, 64, 128, 3, 1, 1)}, {"enc2 3x3 128", conv2d(n, 128, 128, 128, 3, 1, 1)},
      {"enc3 3x3 128>256", conv2d(n, 64, 128, 256, 3, 1, 1)}, {"enc3 3x3 256", conv2d(n, 64, 256, 256, 3, 1, 1)},
      {"enc4 3x3 256>512", conv2d(n, 32, 256, 512, 3, 1, 1)}, {"enc4 3x3 512", conv2d(n, 32, 512, 512, 3, 1, 1)},
      {"mid 3x3 512>1024", conv2d(n, 16, 512, 1024, 3, 1, 1)}, {"mid 3x3 1024", conv2d(n, 16, 1024, 1024, 3, 1, 1)},
      {"dec4 3x3 1024>512", conv2d(n, 32, 1024, 512, 3, 1, 1)}, {"dec3 3x3 512>256", conv2d(n, 64, 512, 256, 3, 1, 1)},
      {"dec2 3x3 256>128", conv2d(n, 128, 256, 128, 3, 1, 1)}, {"dec1 3x3 128>64", conv2d(n, 256, 128, 64, 3, 1, 1)},
  };
}

}  // namespace strata_examples
