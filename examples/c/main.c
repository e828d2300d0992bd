/* Run a model built by `minimlc build MODEL -o libmodel.so` from C: load its weights, run it once, print every
 * output value (one per line, "%.9g": float32 values read back exactly).
 *
 *     cc -O2 -I. main.c -L. -lmodel -Wl,-rpath,'$ORIGIN' -o run_model
 *     ./run_model libmodel.weights [-t THREADS] [INPUT.f32 ...]
 *
 * Each INPUT.f32 is the raw float32 contents of one input, in the order of MODEL_INPUT_NAMES (numpy:
 * `x.astype(np.float32).tofile("x.f32")`); without them every input is the fixed ramp x[i] = (i % 17) / 17 - 0.5. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libmodel.h"

static float *read_input(const char *path, long size) {
    float *data = malloc((size_t)size * sizeof(float));
    FILE *file = fopen(path, "rb");
    if (!data || !file || fread(data, sizeof(float), (size_t)size, file) != (size_t)size || fgetc(file) != EOF) {
        fprintf(stderr, "cannot read %ld float32 values (and nothing more) from '%s'\n", size, path);
        exit(2);
    }
    fclose(file);
    return data;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s WEIGHTS [-t THREADS] [INPUT.f32 ...]\n", argv[0]);
        return 2;
    }
    const char *output_names[] = MODEL_OUTPUT_NAMES;
    const long input_sizes[] = MODEL_INPUT_SIZES, output_sizes[] = MODEL_OUTPUT_SIZES;
    int threads = 0, first_input = 2;
    if (argc > 3 && strcmp(argv[2], "-t") == 0) {
        threads = atoi(argv[3]);
        first_input = 4;
    }
    if (argc > first_input && argc - first_input != MODEL_NUM_INPUTS) {
        fprintf(stderr, "expected %d input files, got %d\n", MODEL_NUM_INPUTS, argc - first_input);
        return 2;
    }

    float *inputs[MODEL_NUM_INPUTS], *outputs[MODEL_NUM_OUTPUTS];
    for (int i = 0; i < MODEL_NUM_INPUTS; ++i) {
        if (argc > first_input) {
            inputs[i] = read_input(argv[first_input + i], input_sizes[i]);
            continue;
        }
        inputs[i] = malloc((size_t)input_sizes[i] * sizeof(float));
        for (long j = 0; j < input_sizes[i]; ++j)
            inputs[i][j] = (float)(j % 17) / 17.0f - 0.5f;
    }
    for (int i = 0; i < MODEL_NUM_OUTPUTS; ++i)
        outputs[i] = malloc((size_t)output_sizes[i] * sizeof(float));

    minimlc_model *model = model_load(argv[1], threads);
    if (!model) {
        fprintf(stderr, "%s\n", model_last_error());
        return 1;
    }
    if (model_run_arrays(model, (const float *const *)inputs, outputs) != 0) {
        fprintf(stderr, "%s\n", model_last_error());
        return 1;
    }
    for (int i = 0; i < MODEL_NUM_OUTPUTS; ++i) {
        printf("output %s %ld\n", output_names[i], output_sizes[i]);
        for (long j = 0; j < output_sizes[i]; ++j)
            printf("%.9g\n", outputs[i][j]);
    }
    model_free(model);
    return 0;
}
