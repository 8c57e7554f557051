"""Paper B ablation: does R = 2 fail to compose for want of loops, or of layer passes?"""
