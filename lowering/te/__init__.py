"""te-to-te passes (inlining, convolution algorithm and layouts) and the te builder they share."""
