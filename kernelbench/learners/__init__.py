"""Downstream learners on random features (layer 2): one module per learner.

Learners turn a fitted feature map into a prediction: on the approximate kernel
z(X) z(X')^T + constant (a precomputed-kernel SVM), or on the explicit features
(a linear model, or kernel ridge regression solved by chunked normal equations).
"""
