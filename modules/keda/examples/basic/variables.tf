# This example has no input variables.
