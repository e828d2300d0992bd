/* Run a model built by `minimlc build MODEL -o libmodel.so` from C: load its weights, run it once, print every
 * output value (one per line: floats as "%.9g", which reads a float32 back exactly; integers as integers).
 *
 *     cc -O2 -I. main.c -L. -lmodel -Wl,-rpath,'$ORIGIN' -o run_model
 *     ./run_model libmodel.weights [-t THREADS] [INPUT.bin ...]
 *
 * Each INPUT.bin is the raw contents of one input, in the order of MODEL_INPUT_NAMES, of the element type that
 * MODEL_INPUT_DTYPES names (numpy: `x.astype(np.float32).tofile("x.bin")`, `ids.astype(np.int64).tofile("ids.bin")`).
 * Without them every float input is the fixed ramp x[i] = (i % 17) / 17 - 0.5, every integer input i % 17 and every
 * bool input i % 2 (other types: zeros). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libmodel.h"

/* The bytes of one element of each dtype wider than a byte; the others (int8, uint8, bool, float8, ...) are bytes. */
static const struct {
    const char *dtype;
    size_t size;
} WIDE_TYPES[] = {
    {"float64", 8}, {"int64", 8}, {"uint64", 8}, {"float32", 4}, {"int32", 4},
    {"uint32", 4},  {"float16", 2}, {"bfloat16", 2}, {"int16", 2}, {"uint16", 2},
};

static size_t element_size(const char *dtype) {
    for (size_t i = 0; i < sizeof WIDE_TYPES / sizeof WIDE_TYPES[0]; ++i)
        if (strcmp(dtype, WIDE_TYPES[i].dtype) == 0)
            return WIDE_TYPES[i].size;
    return 1;
}

static int is(const char *dtype, const char *name) { return strcmp(dtype, name) == 0; }

static void *read_input(const char *path, long size, const char *dtype) {
    size_t bytes = element_size(dtype);
    void *data = malloc((size_t)size * bytes);
    FILE *file = fopen(path, "rb");
    if (!data || !file || fread(data, bytes, (size_t)size, file) != (size_t)size || fgetc(file) != EOF) {
        fprintf(stderr, "cannot read %ld %s values (and nothing more) from '%s'\n", size, dtype, path);
        exit(2);
    }
    fclose(file);
    return data;
}

static void *ramp_input(long size, const char *dtype) {
    void *data = calloc((size_t)size, element_size(dtype));
    for (long j = 0; data && j < size; ++j) {
        if (is(dtype, "float32"))
            ((float *)data)[j] = (float)(j % 17) / 17.0f - 0.5f;
        else if (is(dtype, "float64"))
            ((double *)data)[j] = (double)(j % 17) / 17.0 - 0.5;
        else if (is(dtype, "int64") || is(dtype, "uint64"))
            ((int64_t *)data)[j] = j % 17;
        else if (is(dtype, "int32") || is(dtype, "uint32"))
            ((int32_t *)data)[j] = (int32_t)(j % 17);
        else if (is(dtype, "int8") || is(dtype, "uint8"))
            ((uint8_t *)data)[j] = (uint8_t)(j % 17);
        else if (is(dtype, "bool"))
            ((uint8_t *)data)[j] = (uint8_t)(j % 2);
    }
    return data;
}

static void print_value(const void *data, long j, const char *dtype) {
    if (is(dtype, "float32"))
        printf("%.9g\n", ((const float *)data)[j]);
    else if (is(dtype, "float64"))
        printf("%.17g\n", ((const double *)data)[j]);
    else if (is(dtype, "int64"))
        printf("%lld\n", (long long)((const int64_t *)data)[j]);
    else if (is(dtype, "int32"))
        printf("%d\n", ((const int32_t *)data)[j]);
    else if (is(dtype, "int16"))
        printf("%d\n", ((const int16_t *)data)[j]);
    else if (is(dtype, "int8"))
        printf("%d\n", ((const int8_t *)data)[j]);
    else if (is(dtype, "uint64"))
        printf("%llu\n", (unsigned long long)((const uint64_t *)data)[j]);
    else if (is(dtype, "uint32"))
        printf("%u\n", ((const uint32_t *)data)[j]);
    else if (element_size(dtype) == 2) /* uint16, and the bits of float16 and bfloat16 */
        printf("%u\n", ((const uint16_t *)data)[j]);
    else /* uint8, bool, and the bytes of float8, int4, ... */
        printf("%u\n", ((const uint8_t *)data)[j]);
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s WEIGHTS [-t THREADS] [INPUT.bin ...]\n", argv[0]);
        return 2;
    }
    const char *output_names[] = MODEL_OUTPUT_NAMES;
    const char *input_dtypes[] = MODEL_INPUT_DTYPES, *output_dtypes[] = MODEL_OUTPUT_DTYPES;
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

    void *inputs[MODEL_NUM_INPUTS], *outputs[MODEL_NUM_OUTPUTS];
    for (int i = 0; i < MODEL_NUM_INPUTS; ++i) {
        if (argc > first_input)
            inputs[i] = read_input(argv[first_input + i], input_sizes[i], input_dtypes[i]);
        else
            inputs[i] = ramp_input(input_sizes[i], input_dtypes[i]);
    }
    for (int i = 0; i < MODEL_NUM_OUTPUTS; ++i)
        outputs[i] = malloc((size_t)output_sizes[i] * element_size(output_dtypes[i]));

    minimlc_model *model = model_load(argv[1], threads);
    if (!model) {
        fprintf(stderr, "%s\n", model_last_error());
        return 1;
    }
    /* model_run_arrays takes float arrays where every input and output is float32, else void ones: void converts to
     * either. */
    if (model_run_arrays(model, (const void *)inputs, (const void *)outputs) != 0) {
        fprintf(stderr, "%s\n", model_last_error());
        return 1;
    }
    for (int i = 0; i < MODEL_NUM_OUTPUTS; ++i) {
        printf("output %s %ld\n", output_names[i], output_sizes[i]);
        for (long j = 0; j < output_sizes[i]; ++j)
            print_value(outputs[i], j, output_dtypes[i]);
    }
    model_free(model);
    return 0;
}
